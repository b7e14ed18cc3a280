export {
  CONSOLE_ASSETS_PREFIX,
  CONTENT_SECURITY_POLICY,
  type ConsoleOptions,
  createConsole,
  isConsolePath,
} from './serve.js'
