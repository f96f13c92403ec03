# Renders a tmux capture (tmux capture-pane -e -p) as HTML, for a screenshot with headless chromium (docs/watch.md says how).
import html, re, sys
BASIC = ['#000000','#cd3131','#0dbc79','#e5e510','#2472c8','#bc3fbc','#11a8cd','#e5e5e5']
BRIGHT = ['#666666','#f14c4c','#23d18b','#f5f543','#3b8eea','#d670d6','#29b8db','#ffffff']
def c256(n):
    if n < 8: return BASIC[n]
    if n < 16: return BRIGHT[n-8]
    if n < 232:
        n -= 16; r, g, b = n//36, (n//6)%6, n%6
        f = lambda v: 0 if v == 0 else 55 + v*40
        return '#%02x%02x%02x' % (f(r), f(g), f(b))
    v = 8 + (n-232)*10; return '#%02x%02x%02x' % (v, v, v)
text = sys.stdin.read()
out = []; fg = None; bold = False
pos = 0
def span(s):
    if not s: return ''
    style = []
    if fg: style.append('color:'+fg)
    if bold: style.append('font-weight:bold')
    e = html.escape(s)
    return f'<span style="{";".join(style)}">{e}</span>' if style else e
for m in re.finditer(r'\x1b\[([0-9;]*)m', text):
    out.append(span(text[pos:m.start()])); pos = m.end()
    codes = [int(c) if c else 0 for c in m.group(1).split(';')]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0: fg = None; bold = False
        elif c == 1: bold = True
        elif c == 22: bold = False
        elif 30 <= c <= 37: fg = BASIC[c-30]
        elif 90 <= c <= 97: fg = BRIGHT[c-90]
        elif c == 39: fg = None
        elif c == 38 and i+2 < len(codes) and codes[i+1] == 5: fg = c256(codes[i+2]); i += 2
        elif c == 38 and i+4 < len(codes) and codes[i+1] == 2: fg = '#%02x%02x%02x' % tuple(codes[i+2:i+5]); i += 4
        i += 1
out.append(span(text[pos:]))
body = ''.join(out)
print(f'''<!doctype html><html><head><meta charset="utf-8"><style>
body{{margin:0;background:#1e1e1e}} pre{{margin:0;padding:12px 16px;color:#d4d4d4;font:13px/1.2 "DejaVu Sans Mono",monospace;background:#1e1e1e;display:inline-block}}
</style></head><body><pre>{body}</pre></body></html>''')
