# SPDX-License-Identifier: GPL-2.0
"""gen.py's statement rules (issue 50): mutants made of whole statements
of a function body, found by a small scanner of C (not a compiler: it
knows braces, parentheses, statements, and the headers of if, else, for,
while, switch, case and labels).

  del      each assignment or call statement deleted (made "(void)0;"),
           one at a time; not a reset (rule reset), not "X++;" or "+= 1"
           (rule inc), not a lock or unlock (a hang, not a finding), not a
           free (a leak no test of behaviour sees), not a macro that
           declares (LIBBPF_OPTS, DEFINE_*) or a DTRACE probe
  idx      each index x[i] made x[0] (i not already a number; not an
           array's size in its declaration, not in sizeof)
  swap     two of a pair (saddr/daddr, sport/dport, src/dst, orig/reply,
           client/server, laddr/raddr, lport/rport, local/remote, ...)
           swapped: two arguments of one call or items of one initializer,
           the values of .X = and .Y = in one initializer, or the values
           (the arguments) of two statements in a row that assign (call
           the same function on) X and Y
  reset    a state reset removed: "X = 0;" (0, NULL, false),
           memset/__builtin_memset, an atomic store or WRITE_ONCE of 0
  errret   an early return or goto on an error path removed (made
           "(void)0;"): a return or goto that ends the body of an if or
           else the function goes on past; goto always, return of nothing,
           of a negative value, NULL, false, an error variable (err, ret,
           rc, error, errno) or a verdict that hands the packet on
           (XDP_PASS, TC_ACT_OK, ...).  Not the return of a check of what
           the statement before allocated (reached only out of memory,
           which no test makes).  Not a goto whose label has no
           other goto (unused label: -Werror); in bpf/ and include/ not a
           check of a pointer (!p, == NULL) or of a packet's end (the
           verifier refuses the program: a kill by any test that loads it,
           which tells nothing of the tests)

Only code that is built: comments, strings, preprocessor lines and their
continuations, #if 0 and #ifdef TOE_NO_CAPTURE (the default build has
capture) are left out, and only statements inside a function body.
"""
import re

DEAD_IFS = (re.compile(r"^\s*#\s*if\s+0\b"), re.compile(r"^\s*#\s*ifdef\s+TOE_NO_CAPTURE\b"))
KEYWORDS = {"return", "goto", "break", "continue", "case", "default", "else", "do", "sizeof", "typeof",
            "if", "while", "for", "switch", "__typeof__", "asm", "__asm__"}
ASSIGN_RE = re.compile(r"^\(?\**[A-Za-z_]\w*(?:\s*(?:->|\.)\s*\w+|\s*\[[^\]]*\])*\)?\s*"
                       r"(=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<=|>>=)(?!=)")
CALL_RE = re.compile(r"^(?:\(void\)\s*)?([A-Za-z_]\w*(?:(?:->|\.)\w+)*)\s*\(")
DECL_RE = re.compile(r"^(?:(?:const|static|volatile|register|unsigned|signed|struct|union|enum|long|short|"
                     r"extern|inline)\s+)*([A-Za-z_]\w*)(?:\s+|\s*\*+\s*)(?:const\s+)?\**\s*[A-Za-z_]\w*"
                     r"\s*(?:[=\[;,(]|__attribute__|$)")
ZERO = r"(?:0|0U|0UL|0ULL|NULL|false|\(\w+\)\s*0)"
RESET_ASSIGN_RE = re.compile(r"^\**[A-Za-z_][\w.\->\[\]\s]*?\s*=\s*" + ZERO + r"\s*$")
RESET_CALL_RE = re.compile(r"^(?:memset|__builtin_memset|bzero|explicit_bzero)\s*\(|"
                           r"^(?:__atomic_store_n|WRITE_ONCE|atomic_set|atomic64_set)\s*\([^,]*,\s*" + ZERO + r"\s*[,)]")
LOCK_RE = re.compile(r"(?:^|_)(?:un)?lock(?:_\w+)?$|^(?:rcu_read_|spin_|mutex_|local_bh_)|_(?:un)?lock_")
FREE_RE = re.compile(r"^(?:free|kfree|kvfree|vfree|kfree_rcu|kmem_cache_free)$")
DECL_MACRO_RE = re.compile(r"^(?:DTRACE\w*|LIBBPF_OPTS\w*|DECLARE_\w+|DEFINE_\w+|\w+_OPTS)$")  # a probe, a declaration
INC_SKIP_RE = re.compile(r"^\**[A-Za-z_][\w.\->\[\]]*\s*(?:\+\+|\+=\s*1\s*$)")
ERR_VALUE_RE = re.compile(r"^(?:-.+|NULL|false|err|ret|rc|error|r|errno|\w*errno\w*|XDP_PASS|XDP_DROP|XDP_ABORTED|"
                          r"TC_ACT_OK|TC_ACT_SHOT|TC_ACT_UNSPEC|SK_PASS|SK_DROP|ERR_PTR\(.*\)|PTR_ERR\(.*\))$")
ALLOC_RE = re.compile(r"([A-Za-z_][\w.\->\[\]]*)\s*=\s*(?:\([^()]*\)\s*)?(?:malloc|calloc|realloc|reallocarray|"
                      r"strdup|strndup|kzalloc|kmalloc|kcalloc|kvzalloc|kvmalloc|kmem_cache_z?alloc|vzalloc|"
                      r"vmalloc)\s*\(")
PAIRS = [("saddr", "daddr"), ("sport", "dport"), ("src", "dst"), ("orig", "reply"), ("client", "server"),
         ("laddr", "raddr"), ("lport", "rport"), ("local", "remote"), ("smac", "dmac"),
         ("h_source", "h_dest"), ("sip", "dip"), ("source", "dest")]
PARTNER = dict(PAIRS + [(b, a) for a, b in PAIRS])
PAIR_WORD_RE = re.compile(r"\b((?:[A-Za-z]\w*_)?)(" + "|".join(sorted(PARTNER, key=len, reverse=True)) +
                          r")((?:\d+|_\w+)?)\b")
BPF_PTR_CHECK_RE = re.compile(r"!\s*[A-Za-z_][\w]*(?:(?:->|\.)\w+)*\s*(?:\)|\|\||&&|$)|==\s*NULL|\bdata_end\b|"
                              r"\bend\b")


def blank(text):
    """text with comments, strings and char literals made spaces (newlines
    kept), so every offset and line of the result is the same in text."""
    out, i, n = list(text), 0, len(text)

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def blank_cpp(code):
    """code with preprocessor lines (and their continuations) and the
    branches the build leaves out (#if 0, #ifdef TOE_NO_CAPTURE) blanked."""
    lines, out, cont, dead = code.split("\n"), [], False, []  # dead: a stack of (depth, dead?)
    depth = 0
    for line in lines:
        s = line.strip()
        is_cpp = cont or s.startswith("#")
        cont = is_cpp and line.rstrip().endswith("\\")
        if is_cpp and s.startswith("#"):
            d = re.sub(r"^#\s*", "", s)
            if d.startswith("if"):
                depth += 1
                dead.append((depth, any(r.match(s) for r in DEAD_IFS)))
            elif d.startswith(("else", "elif")) and dead and dead[-1][0] == depth:
                dead[-1] = (depth, not dead[-1][1] if d.startswith("else") else False)
            elif d.startswith("endif"):
                if dead and dead[-1][0] == depth:
                    dead.pop()
                depth -= 1
        off = is_cpp or any(x for _, x in dead)
        out.append(re.sub(r"\S", " ", line) if off else line)
    return "\n".join(out)


def paren_end(s, i):
    """The index of the bracket that closes the one at s[i], or -1."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] in "([{":
            depth += 1
        elif s[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def split_top(s, a, b):
    """[(start, end)] of the comma-separated items of s[a:b] at depth 0,
    each trimmed of spaces."""
    items, depth, start = [], 0, a
    for j in range(a, b + 1):
        c = s[j] if j < b else ","
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            x, y = start, j
            while x < y and s[x].isspace():
                x += 1
            while y > x and s[y - 1].isspace():
                y -= 1
            items.append((x, y))
            start = j + 1
    return items


class Stmt:
    """One statement of a function body: the offsets of its simple part
    (headers stripped) [s, e) (e past the ';'), what holds it."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def statements(code):
    """[Stmt] of code (blanked): each ';'-ended statement inside a function
    body, with: s, e (the simple statement's offsets), hdr ('if', 'else',
    or None: the unbraced if or else it is the body of), blk (the header
    of the innermost braced block), blk_end (that block's closing brace),
    fn (the function body's (open, close)), sw (inside a switch)."""
    close, stack = {}, []
    for i, c in enumerate(code):
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            close[stack.pop()] = i
    out, heads, stack, seg, paren = [], [], [], 0, 0
    # stack: (kind, open offset, header, header's offset); kinds fn, blk,
    # sw, init, agg
    for i, c in enumerate(code):
        if c in "([":
            paren += 1
            continue
        if c in ")]":
            paren -= 1
            continue
        if paren > 0:
            continue
        if c == "{":
            prev = code[:i].rstrip()[-1:]
            hdr = " ".join(code[seg:i].split())
            ctl = re.match(r"^(\} )?(if|else|for|while|switch|do)\b", hdr)
            if (stack and stack[-1][0] == "init") or prev in ("=", ",", "(") or \
                    (stack and prev == ")" and not ctl):  # an initializer, a compound literal
                stack.append(("init", i, "", seg))
                continue
            if not stack:
                kind = "fn" if prev == ")" else "agg"
            elif stack[-1][0] == "agg":
                kind = "agg"
            else:
                kind = "sw" if hdr.startswith("switch") else "blk"
                heads.append((seg, i))
            stack.append((kind, i, hdr, seg))
            seg = i + 1
        elif c == "}":
            if stack and stack[-1][0] == "init":
                stack.pop()
                continue
            if stack:
                stack.pop()
            seg = i + 1
        elif c == ";":
            if stack and stack[-1][0] == "init":
                continue
            kinds = [k[0] for k in stack]
            if stack and kinds[0] == "fn" and "agg" not in kinds and "init" not in kinds:
                st = simple(code, seg, i + 1)
                if st:
                    s, hdr, case = st
                    inner = stack[-1]
                    out.append(Stmt(s=s, e=i + 1, hdr=hdr, blk=inner[2] if inner[0] != "fn" else None,
                                    blk_seg=inner[3],
                                    blk_end=close.get(inner[1], -1), fn=(stack[0][1], close.get(stack[0][1], -1)),
                                    sw=inner[0] == "sw" or case, seg=seg))
            seg = i + 1
    return out, heads


def simple(code, a, b):
    """(start, header, case) of the statement code[a:b] with its headers
    (if (...), else, for (...), while (...), do, case X:, label:) stripped:
    header is 'if' or 'else' when the last one stripped was, case when a
    case or default label was; None for an empty statement."""
    i, hdr, case = a, None, False
    while True:
        while i < b and code[i].isspace():
            i += 1
        rest = code[i:b]
        m = re.match(r"(if|while|for|switch)\s*\(", rest)
        if m:
            j = paren_end(code, i + m.end() - 1)
            if j < 0 or j >= b:
                return None
            hdr, i = (m.group(1) if m.group(1) == "if" else None), j + 1
            continue
        m = re.match(r"(else|do)\b", rest)
        if m:
            hdr, i = (m.group(1) if m.group(1) == "else" else None), i + m.end()
            continue
        m = re.match(r"(case\b[^;]*?|default\s*):(?!:)", rest)
        if m:
            case, hdr, i = True, None, i + m.end()
            continue
        m = re.match(r"([A-Za-z_]\w*)\s*:(?!:)", rest)
        if m and m.group(1) not in KEYWORDS:
            hdr, i = None, i + m.end()
            continue
        break
    if i >= b - 1 or not code[i:b - 1].strip():
        return None
    return i, hdr, case


def is_decl(st):
    m = DECL_RE.match(st)
    return bool(m) and m.group(1) not in KEYWORDS


def next_token(code, i):
    """The first word or character of code past offset i."""
    m = re.compile(r"\s*(\w+|\S)").match(code, i + 1)
    return m.group(1) if m else ""


def pair_of(a, b):
    """Does b read as a with one word of a pair made its partner?"""
    for m in PAIR_WORD_RE.finditer(a):
        if a[:m.start(2)] + PARTNER[m.group(2)] + a[m.end(2):] == b:
            return True
    return False


def stmt_sites(path, text):
    """[(rule, [(start, end, new text)])] of text (a C file at path): each
    mutant as the edits it makes, by offset."""
    code = blank_cpp(blank(text))
    bpf = path.startswith(("bpf/", "include/"))
    out = []
    stmts, heads = statements(code)
    for k, t in enumerate(stmts):
        st = code[t.s:t.e - 1].strip()
        word = re.match(r"\w*", st).group(0)
        if word in ("return", "goto"):
            out += errret(code, t, st, word, bpf)
            continue
        if word in KEYWORDS:
            continue
        decl = is_decl(st)
        out += [("idx", [e]) for e in idx_edits(code, t.s, t.e, decl)]
        if decl:
            out += [("swap", e) for e in swap_within(code, text, t.s, t.e)]
            continue
        call = CALL_RE.match(st)
        if RESET_ASSIGN_RE.match(st) or RESET_CALL_RE.match(st):
            if not last_use(code, t, st):
                out.append(("reset", [(t.s, t.e, "(void)0;")]))
        elif INC_SKIP_RE.match(st):
            pass
        elif call and (paren_end(code, t.s + call.end() - 1) == t.s + len(st) - 1 or
                       re.match(r"^[^=]*\)\s*,\s*[A-Za-z_]\w*\s*\(.*\)$", st)):
            name = call.group(1).split(">")[-1].split(".")[-1]
            if not LOCK_RE.search(name) and not FREE_RE.match(name) and not DECL_MACRO_RE.match(name) and \
                    not last_use(code, t, st):
                out.append(("del", [(t.s, t.e, "(void)0;")]))
        elif (ASSIGN_RE.match(st) or re.match(r"^\**[A-Za-z_][\w.\->\[\]]*\s*--\s*$|^--", st)) and \
                not last_use(code, t, st):
            out.append(("del", [(t.s, t.e, "(void)0;")]))
        out += [("swap", e) for e in swap_within(code, text, t.s, t.e)]
        if k + 1 < len(stmts):
            out += [("swap", e) for e in swap_pair(code, text, t, stmts[k + 1])]
    # the headers of braced blocks and of unbraced bodies hold indexes too
    for a, b in [(t.seg, t.s) for t in stmts if t.seg < t.s] + heads:
        out += [("idx", [e]) for e in idx_edits(code, a, b, False)]
    return out


def params_open(code, fn_open):
    """The offset of the '(' of the parameter list before a function body."""
    j = code[:fn_open].rstrip()
    depth = 0
    for k in range(len(j) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(j[k], 0)
        if depth == 0:
            return k
    return fn_open


def last_use(code, t, st):
    """Does deleting st leave a function unused, or a parameter or variable
    of the function (used once besides, in its declaration: -Werror)?"""
    if last_call(code, st):
        return True
    fn = code[params_open(code, t.fn[0]):t.fn[1]]
    for name in set(re.findall(r"(?<![.>\w])([A-Za-z_]\w*)\b(?!\s*\()", st)) - KEYWORDS:
        pat = r"(?<![.>\w])%s\b" % name
        if len(re.findall(pat, fn)) - len(re.findall(pat, st)) == 1:
            return True
    return False


def last_call(code, st):
    """Does st name (call, or take the address of) a static function of
    the file that nothing else names (deleted, the function is unused:
    -Werror)?"""
    for name in set(re.findall(r"\b([A-Za-z_]\w*)\b", st)) - KEYWORDS:
        if re.search(r"\bstatic\b[^;{}()]*\b%s\s*\(" % name, code) and \
                len(re.findall(r"\b%s\b" % name, code)) == 2:
            return True
    return False


def errret(code, t, st, word, bpf):
    """[(rule, edits)]: the return or goto st removed when it is early, on
    an error path."""
    if t.sw:
        return []
    hdr = t.hdr or (t.blk if t.blk and re.match(r"^(\} )?(else|if)\b", t.blk) else None)
    if not hdr:
        return []
    body_end = t.e - 1 if t.hdr else t.blk_end
    if t.hdr is None and next_token(code, t.e - 1) != "}":
        return []  # not the block's last statement: code after it is dead anyway
    nxt = next_token(code, body_end)
    if nxt == "}" or body_end >= t.fn[1]:
        return []  # the function ends there: removing it changes nothing
    if word == "goto":
        label = re.match(r"goto\s+(\w+)", st)
        if not label or len(re.findall(r"\bgoto\s+%s\s*;" % label.group(1), code[t.fn[0]:t.fn[1]])) < 2:
            return []
    else:
        val = st[len("return"):].strip()
        if val and not ERR_VALUE_RE.match(val):
            return []
    cond = code[t.seg:t.s] if t.hdr else t.blk or ""
    if alloc_check(code, t.seg if t.hdr else t.blk_seg, cond):
        return []
    if bpf:
        if BPF_PTR_CHECK_RE.search(cond):
            return []
    return [("errret", [(t.s, t.e, "(void)0;")])]


def alloc_check(code, at, cond):
    """Is cond (an if's, at offset at) a check of what the statement before
    it allocated (no test makes an allocation fail: such a return is
    reached only out of memory)?"""
    j = code.rfind(";", 0, at)
    k = max(code.rfind(";", 0, j), code.rfind("{", 0, j), code.rfind("}", 0, j))
    m = ALLOC_RE.search(code[k + 1:j]) if j > 0 else None
    return bool(m) and re.search(r"!\s*%s\b|\b%s\s*==\s*NULL" % (re.escape(m.group(1)), re.escape(m.group(1))),
                                 cond) is not None


def idx_edits(code, a, b, decl):
    """[(start, end, '0')]: each index of code[a:b] that is not a number,
    not in sizeof, not a declared array's size."""
    out, start = [], a
    if decl:
        eq = code.find("=", a, b)
        if eq < 0:
            return []
        start = eq
    for m in re.finditer(r"(?<=[\w\)\]])\s*\[", code[start:b]):
        o = start + m.end() - 1
        c = paren_end(code, o)
        if c < 0 or c >= b:
            continue
        inner = code[o + 1:c].strip()
        if not inner or re.match(r"^(0x[0-9a-fA-F]+|\d+)[uUlL]*$", inner):
            continue
        before = code[a:o]
        if re.search(r"\b(sizeof|ARRAY_SIZE|offsetof|typeof|__typeof__)\s*\([^()]*$", before):
            continue
        out.append((o + 1, c, "0"))
    return out


def swap_within(code, text, a, b):
    """[edits]: two items of one call's arguments or one initializer that
    are a pair swapped; the values of .X = and .Y = (a pair) swapped."""
    out = []
    for m in re.finditer(r"[\(\{]", code[a:b]):
        o = a + m.start()
        c = paren_end(code, o)
        if c < 0 or c > b:
            continue
        items = split_top(code, o + 1, c)
        texts = [" ".join(code[x:y].split()) for x, y in items]
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                x, y = items[i], items[j]
                if pair_of(texts[i], texts[j]):
                    out.append([(x[0], x[1], text[y[0]:y[1]]), (y[0], y[1], text[x[0]:x[1]])])
                    continue
                mi = re.match(r"^\.(\w+)\s*=\s*", texts[i])
                mj = re.match(r"^\.(\w+)\s*=\s*", texts[j])
                if mi and mj and PARTNER.get(mi.group(1)) == mj.group(1):
                    vi = x[0] + re.match(r"^\.\w+\s*=\s*", code[x[0]:x[1]]).end()
                    vj = y[0] + re.match(r"^\.\w+\s*=\s*", code[y[0]:y[1]]).end()
                    if code[vi:x[1]].strip() != code[vj:y[1]].strip():
                        out.append([(vi, x[1], text[vj:y[1]]), (vj, y[1], text[vi:x[1]])])
    return out


def swap_pair(code, text, t, u):
    """[edits]: statements t and u in a row assigning X and Y (a pair), or
    calling one function with X and Y: their values (their other
    arguments that differ) swapped."""
    if u.hdr or t.hdr or u.seg != t.e or code[u.seg:u.s].strip():
        return []
    a, b = code[t.s:t.e - 1], code[u.s:u.e - 1]
    ma, mb = ASSIGN_RE.match(a), ASSIGN_RE.match(b)
    if ma and mb and ma.group(1) == mb.group(1) == "=":
        la, lb = " ".join(a[:ma.start(1)].split()), " ".join(b[:mb.start(1)].split())
        ra, rb = (t.s + ma.end(), t.e - 1), (u.s + mb.end(), u.e - 1)
        chained = re.search(r"[^=!<>]=[^=]", code[ra[0]:ra[1]] + code[rb[0]:rb[1]])
        if pair_of(la, lb) and not chained and code[ra[0]:ra[1]].strip() != code[rb[0]:rb[1]].strip():
            return [[(ra[0], ra[1], text[rb[0]:rb[1]]), (rb[0], rb[1], text[ra[0]:ra[1]])]]
        return []
    ca, cb = CALL_RE.match(a), CALL_RE.match(b)
    if not (ca and cb and ca.group(1) == cb.group(1)):
        return []
    pa, pb = t.s + ca.end() - 1, u.s + cb.end() - 1
    ea, eb = paren_end(code, pa), paren_end(code, pb)
    if ea < 0 or eb < 0:
        return []
    ia, ib = split_top(code, pa + 1, ea), split_top(code, pb + 1, eb)
    if len(ia) != len(ib) or not ia:
        return []
    ta = [" ".join(code[x:y].split()) for x, y in ia]
    tb = [" ".join(code[x:y].split()) for x, y in ib]
    if not pair_of(ta[0], tb[0]):
        return []
    diff = [k for k in range(1, len(ia)) if ta[k] != tb[k]]
    if not diff:
        return []
    edits = []
    for k in diff:
        edits += [(ia[k][0], ia[k][1], text[ib[k][0]:ib[k][1]]), (ib[k][0], ib[k][1], text[ia[k][0]:ia[k][1]])]
    return [edits]


def stmt_mutants(path, text):
    """[(line number, rule, old, new)] of text (a C file at path): old the
    whole lines the mutant edits, new the same lines edited."""
    lines, starts, out = text.split("\n"), [0], []
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(off):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= off:
                lo = mid
            else:
                hi = mid - 1
        return lo

    for rule, edits in stmt_sites(path, text):
        edits = sorted(edits)
        l0, l1 = line_of(edits[0][0]), line_of(max(e for _, e, _ in edits) - 1)
        a = starts[l0]
        b = starts[l1] + len(lines[l1])
        new, at = [], a
        for s, e, w in edits:
            new.append(text[at:s] + w)
            at = e
        new.append(text[at:b])
        out.append((l0 + 1, rule, text[a:b], "".join(new)))
    return sorted(out, key=lambda m: m[0])
