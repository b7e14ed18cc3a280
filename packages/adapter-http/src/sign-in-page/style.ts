import { BASE, TOKENS } from './design.js'

// The sign-in pages' one style sheet, inline (the page loads no other asset): flowadmin's look
// (design.ts) and the page's layout, the console's frame around one card: the bar with the brand
// at the top, the form below it. Fits a phone.
const LAYOUT = `
body{min-height:100vh;padding-top:var(--fa-bar-height);display:flex;align-items:flex-start;justify-content:center}
body::before{content:"";position:absolute;top:0;left:0;right:0;height:var(--fa-bar-height);background:var(--fa-surface);border-bottom:1px solid var(--fa-line)}
.brand{position:absolute;top:0;left:var(--fa-gutter);height:var(--fa-bar-height);margin:0}
main{background:var(--fa-surface);border:1px solid var(--fa-line);border-radius:var(--fa-radius-large);margin:var(--fa-space-6) var(--fa-space-4);padding:var(--fa-space-5);width:100%;max-width:24rem}
h1{font-size:var(--fa-size-title);margin:0 0 var(--fa-space-4)}
p{margin:0 0 var(--fa-space-4)}
main>:last-child{margin-bottom:0}
label{display:block;margin:var(--fa-space-4) 0 0.3rem}
input{width:100%}
button{display:block;width:100%;margin-top:1.25rem;padding:0.6rem}
button:not(.secondary){background:var(--fa-accent);color:var(--fa-accent-text);border-color:var(--fa-accent)}
.error{margin:var(--fa-space-4) 0 0}
form>.error:first-child{margin:0 0 var(--fa-space-4)}
.for{color:var(--fa-muted)}
.or{margin:1.25rem 0 0;text-align:center;color:var(--fa-muted)}
.secret{word-break:break-all;background:var(--fa-chip);padding:var(--fa-space-2);border-radius:var(--fa-radius)}
.codes{columns:2;padding-left:var(--fa-space-5)}
img.qr{display:block;margin:var(--fa-space-4) auto}
`

export const STYLE = `${TOKENS}${BASE}${LAYOUT}`
