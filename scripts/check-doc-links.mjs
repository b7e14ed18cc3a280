#!/usr/bin/env node
// `node scripts/check-doc-links.mjs`: every relative link of the documentation (README.md,
// docs/*.md, packages/*/README.md, examples/*/README.md) points at a file that exists, and every
// `#anchor` at a heading of its page, as GitHub names headings. Prints each broken link with its
// file and line, and exits with 1 when there is one. Links to other sites are not followed.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** The markdown files checked, relative to the root. */
function pages() {
  const list = (dir) => readdirSync(path.join(ROOT, dir), { withFileTypes: true })
  const docs = list('docs').filter((e) => e.isFile() && e.name.endsWith('.md'))
  const readmes = ['packages', 'examples'].flatMap((group) =>
    list(group)
      .filter((e) => e.isDirectory() && existsSync(path.join(ROOT, group, e.name, 'README.md')))
      .map((e) => `${group}/${e.name}/README.md`),
  )
  return ['README.md', ...docs.map((e) => `docs/${e.name}`), ...readmes]
}

/** Lines outside fenced code blocks, with their numbers (1-based). */
function prose(text) {
  const lines = []
  let fence = null
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (marker !== undefined) {
      if (fence === null) fence = marker[0]
      else if (marker[0] === fence) fence = null
      return
    }
    if (fence === null) lines.push({ line, number: index + 1 })
  })
  return lines
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens. */
function anchors(text) {
  const seen = new Map()
  const result = new Set()
  for (const { line } of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (heading === undefined) continue
    const plain = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
      .replace(/ /g, '-')
    const count = seen.get(plain) ?? 0
    seen.set(plain, count + 1)
    result.add(count === 0 ? plain : `${plain}-${count}`)
  }
  return result
}

const anchorCache = new Map()
function anchorsOf(file) {
  if (!anchorCache.has(file)) anchorCache.set(file, anchors(readFileSync(file, 'utf8')))
  return anchorCache.get(file)
}

const broken = []
for (const page of pages()) {
  const file = path.join(ROOT, page)
  for (const { line, number } of prose(readFileSync(file, 'utf8'))) {
    // Code spans may hold brackets; their text never links.
    const text = line.replace(/(`+)[^`]*?\1/g, 'code')
    for (const [, target] of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const [where, anchor] = target.split('#', 2)
      const resolved = where === '' ? file : path.resolve(path.dirname(file), decodeURI(where))
      if (!existsSync(resolved)) {
        broken.push(`${page}:${number}: ${target}: no such file`)
        continue
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${page}:${number}: ${target}: no heading #${anchor} in ${path.relative(ROOT, resolved)}`)
      }
    }
  }
}

if (broken.length > 0) {
  console.error(broken.join('\n'))
  process.exit(1)
}
console.log(`${pages().length} pages: every relative link and anchor resolves`)
