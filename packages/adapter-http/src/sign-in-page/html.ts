// HTML from templates whose every substitution is escaped: what the sign-in pages are made of.

/** Text for HTML: every character that could end a text node or an attribute, escaped. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** HTML made from a template whose every substitution is escaped, unless it is HTML already. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0] ?? ''
  values.forEach((value, index) => {
    const part = Array.isArray(value)
      ? value.map((item) => (item instanceof Html ? item.text : escapeHtml(String(item)))).join('')
      : value instanceof Html
        ? value.text
        : value === null || value === undefined || value === false
          ? ''
          : escapeHtml(String(value))
    text += part + (strings[index + 1] ?? '')
  })
  return new Html(text)
}
