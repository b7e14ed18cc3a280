'use strict'

// Text for the log: the first line of a message that is not blank, trimmed and bounded.

/** The first non-blank line of `text` (any value), trimmed, at most `max` characters; '' for none. */
const firstLine = (text, max = 1000) =>
  String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .slice(0, max) ?? ''

module.exports = { firstLine }
