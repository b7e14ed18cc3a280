export {
  CONSOLE_ASSETS_PREFIX,
  CONTENT_SECURITY_POLICY,
  type ConsoleOptions,
  consolePaths,
  createConsole,
  SIGN_IN_SCRIPT,
} from './serve.js'
