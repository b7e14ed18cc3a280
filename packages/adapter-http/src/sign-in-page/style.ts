// The sign-in pages' one style sheet, inline (the page loads no other asset).
// Contrast at least 4.5:1 everywhere (WCAG AA); focus always visible; fits a phone.
export const STYLE = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;background:#f3f4f6}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center}
main{background:#fff;margin:4rem 1rem;padding:2rem;border-radius:.5rem;box-shadow:0 1px 3px #0003;width:100%;max-width:24rem}
.brand{margin:0 0 1rem;font-weight:600;color:#8f0000;letter-spacing:.02em}
h1{font-size:1.4rem;margin:0 0 1rem}
p{line-height:1.5}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #6e7781;border-radius:.25rem}
button,.button{display:inline-block;box-sizing:border-box;width:100%;margin-top:1.25rem;font:inherit;font-weight:600;padding:.6rem;border-radius:.25rem;border:1px solid #8f0000;background:#8f0000;color:#fff;cursor:pointer;text-align:center;text-decoration:none}
button.secondary{background:#fff;color:#8f0000}
:focus-visible{outline:3px solid #0550ae;outline-offset:2px}
.error{color:#a40e26;background:#ffebe9;border:1px solid #a40e26;border-radius:.25rem;padding:.5rem .75rem}
.error:empty{display:none}
.or{margin:1.25rem 0 0;text-align:center;color:#57606a}
code,.codes{font-family:ui-monospace,Menlo,Consolas,monospace}
.secret{word-break:break-all;background:#f6f8fa;padding:.5rem;border-radius:.25rem}
.codes{columns:2;padding-left:1.5rem}
img.qr{display:block;width:12rem;height:12rem;margin:1rem auto;image-rendering:pixelated}
a{color:#0550ae}
`
