export {
  CONSOLE_ASSETS_PREFIX,
  CONTENT_SECURITY_POLICY,
  type ConsoleOptions,
  createConsole,
} from './serve.js'
