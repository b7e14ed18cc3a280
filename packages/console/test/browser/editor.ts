// What the browser tests do in a stock Node-RED editor's page.
import type { Page } from 'playwright-core'

/**
 * A full deploy from the editor's page, through the editor's own request setup (which adds its
 * token): the HTTP status Node-RED answered.
 */
export const deployFromEditor = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const flows = [
          { id: 'tab1', type: 'tab', label: 'Flow 1' },
          { id: 'n1', type: 'inject', z: 'tab1', name: 'from the editor', wires: [] },
        ]
        const $ = (window as unknown as { $: { ajax(options: object): JQueryLike } }).$
        $.ajax({
          url: 'flows',
          type: 'POST',
          data: JSON.stringify({ flows }),
          contentType: 'application/json; charset=utf-8',
          headers: { 'Node-RED-Deployment-Type': 'full' },
        })
          .done((_data, _text, xhr) => resolve(xhr.status))
          .fail((xhr) => resolve(xhr.status))
      }),
  )

interface JQueryLike {
  done(callback: (data: unknown, text: string, xhr: { status: number }) => void): JQueryLike
  fail(callback: (xhr: { status: number }) => void): JQueryLike
}
