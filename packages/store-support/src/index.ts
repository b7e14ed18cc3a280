export {
  byModuleName,
  type CounterRow,
  counterFromRow,
  type ModuleRow,
  modulesFromRows,
  TOKEN_COLUMNS,
  type TokenRow,
  tokenFromRow,
} from './rows.js'
export { TRAIL_COLUMNS, type TrailRow, trailConditions, trailFromRow, trailValues } from './trail.js'
