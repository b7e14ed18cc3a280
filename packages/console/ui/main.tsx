import { render } from 'hono/jsx/dom'
import { App } from './app.js'

const root = document.getElementById('app')
if (root !== null) {
  root.replaceChildren()
  render(<App />, root)
}
