// The real OpenLDAP slapd of the directory's tests: the bench's (bench/slapd.mjs), so that both
// start the same directory with the same people.
export * from '../../../bench/slapd.mjs'
