export interface ConsoleShot {
  /** The module names the page showed, in its order. */
  modules: string[]
  /** The picture's size in pixels. */
  width: number
  height: number
  /** The scratch copy of the demo the server ran on; removed by the time this resolves. */
  userDir: string
}

export function captureConsole(options: {
  out: string
  width?: number
  height?: number
}): Promise<ConsoleShot>
