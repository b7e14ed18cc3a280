export {
  CONSOLE_ASSETS_PREFIX,
  CONTENT_SECURITY_POLICY,
  type ConsoleOptions,
  consolePaths,
  createConsole,
  isConsolePath,
} from './serve.js'
