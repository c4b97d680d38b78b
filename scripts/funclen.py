import re,sys
# crude C function length finder: top-level '{' after a line that looks like a function header
for fn in sys.argv[1:]:
    lines=open(fn).read().split('\n')
    i=0
    while i<len(lines):
        l=lines[i]
        if l.startswith('{') and i>0:
            # header: go back to find name
            j=i-1
            while j>0 and not re.search(r'\w+\s*\(',lines[j]): j-=1
            m=re.search(r'(\w+)\s*\(',lines[j])
            depth=0;k=i
            while k<len(lines):
                depth+=lines[k].count('{')-lines[k].count('}')
                if depth==0: break
                k+=1
            n=k-j+1
            if n>80: print(f"{fn}:{j+1} {m.group(1) if m else '?'} {n}")
            i=k
        i+=1
