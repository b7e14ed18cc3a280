export {
  CONSOLE_ASSETS_PREFIX,
  CONTENT_SECURITY_POLICY,
  type ConsoleOptions,
  consolePaths,
  createConsole,
} from './serve.js'
