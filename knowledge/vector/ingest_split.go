package vector

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// Split bounds.
const (
	chunkBytes   = 2000     // a chunk of a file that is not Go
	declMaxBytes = 32 << 10 // content kept of one declaration
	summaryBytes = 4096     // a file node's summary
)

// piece is one node of a file: a Go declaration or a chunk.
type piece struct {
	key                string // decl:<path>#<name> or chunk:<path>#<n>
	typ, name          string
	lineStart, lineEnd int
	content            string
	recv               string // a method's receiver type
}

// splitFile turns a file into its file node's summary and its pieces: Go
// files by top-level declaration (go/ast; a file that does not parse is
// chunked), other files into chunks of at most chunkBytes at line
// boundaries (a file that fits one chunk is all in its file node).
func splitFile(abs, rel string, data []byte) (summary string, pieces []piece) {
	if strings.HasSuffix(abs, ".go") {
		if s, ps, ok := splitGo(abs, rel, data); ok {
			return s, ps
		}
	}
	if len(data) <= chunkBytes {
		return string(data), nil
	}
	ps := chunks(abs, rel, data)
	head := fmt.Sprintf("file %s: %d lines in %d chunks\n", rel, bytes.Count(data, []byte("\n"))+1, len(ps))
	return head + clipBytes(ps[0].content, summaryBytes-len(head)), ps
}

// chunks splits data at line ends into pieces of at most chunkBytes (a
// longer line is cut), preferring to end a chunk at a blank line in its
// second half.
func chunks(abs, rel string, data []byte) []piece {
	var out []piece
	line, part := 1, 0 // part: of a line longer than a chunk
	for len(data) > 0 {
		n := min(len(data), chunkBytes)
		if n < len(data) {
			cut := bytes.LastIndex(data[:n], []byte("\n\n"))
			if cut < chunkBytes/2 {
				cut = bytes.LastIndexByte(data[:n], '\n')
			}
			if cut > 0 {
				n = cut + 1
			} else {
				// Inside one long line: never inside a character.
				for n > 1 && !utf8.RuneStart(data[n]) {
					n--
				}
			}
		}
		text := string(data[:n])
		nl := strings.Count(text, "\n")
		end := line + nl
		if strings.HasSuffix(text, "\n") {
			end--
		}
		i := len(out) + 1
		name := fmt.Sprintf("%s:%d-%d", rel, line, end)
		if midLine := !strings.HasSuffix(text, "\n") && n < len(data); midLine || part > 0 {
			// The pieces of one long line are told apart by their part.
			part++
			name += fmt.Sprintf(" part %d", part)
			if !midLine || nl > 0 {
				part = 0
			}
		}
		out = append(out, piece{key: fmt.Sprintf("chunk:%s#%d", abs, i), typ: "chunk",
			name: name, lineStart: line, lineEnd: end, content: text})
		line += nl
		data = data[n:]
	}
	return out
}

// splitGo splits a Go file by top-level declaration.
func splitGo(abs, rel string, data []byte) (string, []piece, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, abs, data, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", nil, false
	}
	src := func(from, to token.Pos) string {
		a, b := fset.Position(from).Offset, fset.Position(to).Offset
		if a < 0 || b > len(data) || a > b {
			return ""
		}
		return clipBytes(string(data[a:b]), declMaxBytes)
	}
	var sum strings.Builder
	fmt.Fprintf(&sum, "package %s (%s)\n", f.Name.Name, rel)
	var imports []string
	for _, im := range f.Imports {
		imports = append(imports, strings.Trim(im.Path.Value, `"`))
	}
	if len(imports) > 0 {
		fmt.Fprintf(&sum, "imports: %s\n", strings.Join(imports, ", "))
	}
	var ps []piece
	seen := map[string]int{}
	add := func(p piece, start, end token.Pos, doc *ast.CommentGroup) {
		if doc != nil {
			start = doc.Pos()
		}
		p.content = src(start, end)
		p.lineStart, p.lineEnd = fset.Position(start).Line, fset.Position(end).Line
		seen[p.name]++
		id := p.name
		if n := seen[p.name]; n > 1 {
			id = fmt.Sprintf("%s~%d", p.name, n)
		}
		p.key = "decl:" + abs + "#" + id
		ps = append(ps, p)
		fmt.Fprintf(&sum, "%s %s\n", p.typ, p.name)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			p := piece{typ: "function", name: d.Name.Name}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				p.typ, p.recv = "method", recvName(d.Recv.List[0].Type)
				p.name = p.recv + "." + d.Name.Name
			}
			add(p, d.Pos(), d.End(), d.Doc)
		case *ast.GenDecl:
			genPieces(d, add)
		}
	}
	return clipBytes(sum.String(), summaryBytes), ps, true
}

// genPieces adds one piece per type spec, and one per var or const
// declaration (a grouped declaration is one piece named by its first
// names).
func genPieces(d *ast.GenDecl, add func(piece, token.Pos, token.Pos, *ast.CommentGroup)) {
	switch d.Tok {
	case token.TYPE:
		for _, sp := range d.Specs {
			ts := sp.(*ast.TypeSpec)
			typ := "type"
			switch ts.Type.(type) {
			case *ast.StructType:
				typ = "struct"
			case *ast.InterfaceType:
				typ = "interface"
			}
			doc := ts.Doc
			start := ts.Pos()
			if len(d.Specs) == 1 {
				doc, start = d.Doc, d.Pos()
			}
			add(piece{typ: typ, name: ts.Name.Name}, start, ts.End(), doc)
		}
	case token.VAR, token.CONST:
		var names []string
		for _, sp := range d.Specs {
			for _, n := range sp.(*ast.ValueSpec).Names {
				names = append(names, n.Name)
			}
		}
		typ := "variable"
		if d.Tok == token.CONST {
			typ = "constant"
		}
		name := strings.Join(names[:min(len(names), 4)], ", ")
		if len(names) > 4 {
			name += fmt.Sprintf(", … (%d)", len(names))
		}
		add(piece{typ: typ, name: name}, d.Pos(), d.End(), d.Doc)
	}
}

// recvName is a receiver's type name without pointer or type parameters.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// packageOf is the Go package node of a directory.
func packageOf(absDir, relDir, name string) *nodeIn {
	return &nodeIn{key: "pkg:" + absDir, domain: vectorop.DomainCode, typ: "package", name: "package " + name + " (" + relDir + ")",
		path: absDir, content: "Go package " + name + " in " + filepath.ToSlash(relDir), trust: vectorop.TrustCode, verified: true,
		source: vectorop.SourceCode, ref: absDir}
}
