// Command gomutate generates the mutants of the Go client (the non-test files of go/), for
// tools/generated_mutants.py: a small mutator on the standard library's go/ast, go/parser and
// go/printer. Its operators and ids match tools/pymutate.py's (see there):
//
//	gomutate list SRC_DIR            # one JSON object per mutant, one a line
//	gomutate apply SRC_DIR ID DEST   # write the mutated file of mutant ID into directory DEST
//	gomutate schemata SRC_DIR DEST [EXCLUDED]
//
// schemata writes every mutant inside a function into ONE copy of the package (mutant schemata),
// in directory DEST: for each such mutant, a copy of its enclosing function with the mutation
// applied, named genmut<N>_<name>, is appended to the file, and the original function begins with
// a switch on genmutActive (read once from $RWQ_GENMUT_ID) that calls the copy of mutant N. The
// lines of the original code do not move (the switch sits on the line of the body's brace).
// Mutants at package level and those listed in the file EXCLUDED (one id a line: copies that did
// not compile) are left out. It prints one JSON object a line: {"id", "n", "file", "start", "end"},
// the lines of each copy in its written file.
package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// errorSwaps maps a code or sentinel to one of another code (go/errors.go).
var errorSwaps = map[string]string{
	"CodeInvalidArgument":   "CodeLeaseLost",
	"CodeLeaseLost":         "CodeInvalidArgument",
	"CodeUnsupportedServer": "CodeRedisError",
	"CodeRedisError":        "CodeNotReplicated",
	"CodeWrongType":         "CodeInvalidArgument",
	"CodeNotReplicated":     "CodeRedisError",
	"CodeShardMismatch":     "CodeInvalidArgument",
	"ErrInvalidArgument":    "ErrLeaseLost",
	"ErrLeaseLost":          "ErrInvalidArgument",
	"ErrUnsupportedServer":  "ErrRedis",
	"ErrRedis":              "ErrNotReplicated",
	"ErrWrongType":          "ErrInvalidArgument",
	"ErrNotReplicated":      "ErrRedis",
	"ErrShardMismatch":      "ErrInvalidArgument",
	"ErrNoPermission":       "ErrRedis",
}

var flips = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// skippedCalls are calls whose arguments are messages or builtins where a drop cannot compile.
var skippedCalls = map[string]bool{
	"fmt.Sprintf": true, "fmt.Errorf": true, "fmt.Fprintf": true, "fmt.Fprintln": true, "errors.New": true,
	"len": true, "cap": true, "make": true, "new": true, "panic": true, "strconv.Itoa": true,
}

type mutant struct {
	ID         string   `json:"id"`
	File       string   `json:"file"`
	Function   string   `json:"function"`
	Operator   string   `json:"operator"`
	Line       int      `json:"line"`
	Original   string   `json:"original"`
	Mutated    string   `json:"mutated"`
	SourceHash string   `json:"source_hash"`
	Lines      []string `json:"lines"`
}

type site struct {
	function, operator string
	node               ast.Node
	scope              ast.Node
	apply, revert      func()
	lines              []string
}

type walker struct {
	fset   *token.FileSet
	name   string
	usages map[string][]string
	sites  []*site
	skip   map[ast.Node]bool
}

func text(fset *token.FileSet, node ast.Node) string {
	var buf bytes.Buffer
	_ = printer.Fprint(&buf, fset, node)
	s := strings.Join(strings.Fields(buf.String()), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func digest(parts ...string) string {
	sum := sha1.Sum([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])[:8]
}

func (w *walker) lineRange(node ast.Node) []string {
	start, end := w.fset.Position(node.Pos()).Line, w.fset.Position(node.End()).Line
	var lines []string
	for line := start; line <= end; line++ {
		lines = append(lines, fmt.Sprintf("%s:%d", w.name, line))
	}
	return lines
}

func (w *walker) add(function, operator string, node, scope ast.Node, lines []string, apply, revert func()) {
	if lines == nil {
		lines = w.lineRange(node)
	}
	w.sites = append(w.sites, &site{function, operator, node, scope, apply, revert, lines})
}

func funcName(decl *ast.FuncDecl) string {
	if decl.Recv != nil && len(decl.Recv.List) > 0 {
		recv := decl.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		if index, ok := recv.(*ast.IndexExpr); ok {
			recv = index.X
		}
		if ident, ok := recv.(*ast.Ident); ok {
			return ident.Name + "." + decl.Name.Name
		}
	}
	return decl.Name.Name
}

func hasBranch(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.BranchStmt); ok {
			found = true
		}
		return !found
	})
	return found
}

func one() *ast.BasicLit { return &ast.BasicLit{Kind: token.INT, Value: "1"} }

func (w *walker) visit(root ast.Node, function string, scope ast.Node, lines []string) {
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil || w.skip[n] {
			return n != nil && !w.skip[n]
		}
		switch node := n.(type) {
		case *ast.ImportSpec, *ast.Field:
			return false
		case *ast.ValueSpec:
			for _, name := range node.Names {
				w.skip[name] = true
			}
		case *ast.CallExpr:
			w.call(node, function, scope, lines)
		case *ast.BasicLit:
			w.number(node, function, scope, lines)
		case *ast.BinaryExpr:
			if flipped, ok := flips[node.Op]; ok {
				original := node.Op
				w.add(function, "cmp", node, scope, lines, func() { node.Op = flipped }, func() { node.Op = original })
			}
		case *ast.Ident:
			if node.Name == "true" || node.Name == "false" {
				original := node.Name
				other := map[string]string{"true": "false", "false": "true"}[original]
				w.add(function, "flag", node, scope, lines, func() { node.Name = other }, func() { node.Name = original })
			} else if swap, ok := errorSwaps[node.Name]; ok {
				original := node.Name
				w.add(function, "error", node, scope, lines, func() { node.Name = swap }, func() { node.Name = original })
			}
		case *ast.BlockStmt:
			for i, stmt := range node.List {
				loop, ok := stmt.(*ast.ForStmt)
				if !ok || loop.Cond == nil || loop.Init != nil || loop.Post != nil || hasBranch(loop.Body) {
					continue
				}
				i, list := i, node.List
				replacement := &ast.IfStmt{If: loop.For, Cond: loop.Cond, Body: loop.Body}
				w.add(function, "while", loop, scope, lines,
					func() { list[i] = replacement }, func() { list[i] = loop })
			}
		case *ast.SliceExpr:
			for _, field := range []*ast.Expr{&node.Low, &node.High} {
				bound := *field
				if bound == nil {
					continue
				}
				if _, ok := bound.(*ast.BasicLit); ok {
					continue
				}
				for _, op := range []token.Token{token.ADD, token.SUB} {
					field, op := field, op
					w.add(function, "bound", node, scope, lines,
						func() { *field = &ast.BinaryExpr{X: bound, Op: op, Y: one()} }, func() { *field = bound })
				}
			}
		}
		return true
	})
}

func (w *walker) number(lit *ast.BasicLit, function string, scope ast.Node, lines []string) {
	original := lit.Value
	var values []string
	if lit.Kind == token.INT {
		v, err := strconv.ParseInt(original, 0, 64)
		if err != nil {
			return
		}
		for _, c := range []int64{v + 1, v - 1, v * 1000, v / 1000} {
			if c != v {
				values = append(values, strconv.FormatInt(c, 10))
			}
		}
	} else if lit.Kind == token.FLOAT {
		v, err := strconv.ParseFloat(original, 64)
		if err != nil {
			return
		}
		for _, c := range []float64{v + 1, v - 1, v * 1000, v / 1000} {
			if c != v {
				values = append(values, strconv.FormatFloat(c, 'g', -1, 64))
			}
		}
	}
	seen := map[string]bool{}
	for _, value := range values {
		if seen[value] {
			continue
		}
		seen[value] = true
		value := value
		if strings.HasPrefix(value, "-") {
			value = "(" + value + ")"
		}
		w.add(function, "num", lit, scope, lines, func() { lit.Value = value }, func() { lit.Value = original })
	}
}

func (w *walker) call(call *ast.CallExpr, function string, scope ast.Node, lines []string) {
	var fn bytes.Buffer
	_ = printer.Fprint(&fn, w.fset, call.Fun)
	if skippedCalls[fn.String()] || call.Ellipsis.IsValid() {
		return
	}
	args := call.Args
	for i := range args {
		dropped := append(append([]ast.Expr{}, args[:i]...), args[i+1:]...)
		w.add(function, "arg-drop", call, scope, lines, func() { call.Args = dropped }, func() { call.Args = args })
	}
	for i := 0; i+1 < len(args); i++ {
		if text(w.fset, args[i]) == text(w.fset, args[i+1]) {
			continue
		}
		swapped := append([]ast.Expr{}, args...)
		swapped[i], swapped[i+1] = args[i+1], args[i]
		w.add(function, "arg-swap", call, scope, lines, func() { call.Args = swapped }, func() { call.Args = args })
	}
}

// usages: name -> "file:line" of every identifier with that name inside a function.
func usages(fset *token.FileSet, files map[string]*ast.File) map[string][]string {
	found := map[string]map[string]bool{}
	for name, file := range files {
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					var ident string
					switch node := n.(type) {
					case *ast.Ident:
						ident = node.Name
					case *ast.SelectorExpr:
						ident = node.Sel.Name
					}
					if ident != "" {
						if found[ident] == nil {
							found[ident] = map[string]bool{}
						}
						found[ident][fmt.Sprintf("%s:%d", name, fset.Position(n.Pos()).Line)] = true
					}
					return true
				})
			}
		}
	}
	out := map[string][]string{}
	for ident, lines := range found {
		for line := range lines {
			out[ident] = append(out[ident], line)
		}
		sort.Strings(out[ident])
	}
	return out
}

func declLines(decl *ast.GenDecl, uses map[string][]string) []string {
	set := map[string]bool{}
	for _, spec := range decl.Specs {
		var names []*ast.Ident
		switch s := spec.(type) {
		case *ast.ValueSpec:
			names = s.Names
		case *ast.TypeSpec:
			names = []*ast.Ident{s.Name}
		}
		for _, name := range names {
			for _, line := range uses[name.Name] {
				set[line] = true
			}
		}
	}
	lines := []string{}
	for line := range set {
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return lines
}

type pkg struct {
	fset  *token.FileSet
	files map[string]*ast.File
	names []string
}

func load(dir string) pkg {
	fset := token.NewFileSet()
	p := pkg{fset: fset, files: map[string]*ast.File{}}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(paths)
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		name := filepath.Base(path)
		p.files[name] = file
		p.names = append(p.names, name)
	}
	return p
}

func (p pkg) sites(name string) []*site {
	uses := usages(p.fset, p.files)
	w := &walker{fset: p.fset, name: name, usages: uses, skip: map[ast.Node]bool{}}
	for _, decl := range p.files[name].Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				w.visit(d.Body, funcName(d), d, nil)
			}
		case *ast.GenDecl:
			if d.Tok == token.VAR || d.Tok == token.CONST {
				w.visit(d, "<package>", d, declLines(d, uses))
			}
		}
	}
	return w.sites
}

func (p pkg) mutants(name string) ([]mutant, []*site) {
	var out []mutant
	sites := p.sites(name)
	seen := map[string]int{}
	for _, s := range sites {
		scope := text(p.fset, s.scope)
		var before, after string
		if loop, ok := s.node.(*ast.ForStmt); ok {
			before, after = "for "+text(p.fset, loop.Cond)+" {", "if "+text(p.fset, loop.Cond)+" {"
		} else {
			before = text(p.fset, s.node)
			s.apply()
			after = text(p.fset, s.node)
			s.revert()
		}
		var full bytes.Buffer
		_ = printer.Fprint(&full, p.fset, s.scope)
		stem := fmt.Sprintf("go/%s/%s/%s/%s", name, s.function, s.operator, digest(before, after))
		id := stem
		if n := seen[stem]; n > 0 {
			id = fmt.Sprintf("%s~%d", stem, n)
		}
		seen[stem]++
		_ = scope
		out = append(out, mutant{id, "go/" + name, s.function, s.operator, p.fset.Position(s.node.Pos()).Line,
			before, after, digest(full.String()), s.lines})
	}
	return out, sites
}

// switched is one mutant compiled into the schemata: its number and the lines of its copy.
type switched struct {
	ID    string `json:"id"`
	N     int    `json:"n"`
	File  string `json:"file"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

type edit struct {
	offset, drop int
	insert       string
}

const activeFile = `package %s

import (
	"os"
	"strconv"
)

// genmutActive is the generated mutant this process runs (tools/gomutate schemata), 0 for none.
var genmutActive = func() int {
	n, _ := strconv.Atoi(os.Getenv("RWQ_GENMUT_ID"))
	return n
}()
`

// dispatch names the unnamed or blank parameters of decl (edits of the original text) and
// returns the call of the copy named copyName: "recv.copyName[T](a, b...)".
func dispatch(fset *token.FileSet, decl *ast.FuncDecl, copyName string, edits *[]edit, first bool) string {
	fixed := map[*ast.Field]bool{}
	if !first { // the parameters are named already
		for _, field := range append(append([]*ast.Field{}, decl.Type.Params.List...), recvFields(decl)...) {
			fixed[field] = true
		}
	}
	name := func(field *ast.Field, i int) []string {
		if len(field.Names) == 0 {
			if !fixed[field] {
				*edits = append(*edits, edit{fset.Position(field.Type.Pos()).Offset, 0, fmt.Sprintf("genmutP%d ", i)})
				fixed[field] = true
			}
			return []string{fmt.Sprintf("genmutP%d", i)}
		}
		var names []string
		for j, ident := range field.Names {
			if ident.Name == "_" {
				n := fmt.Sprintf("genmutP%d_%d", i, j)
				if !fixed[field] {
					*edits = append(*edits, edit{fset.Position(ident.Pos()).Offset, 1, n})
				}
				names = append(names, n)
			} else {
				names = append(names, ident.Name)
			}
		}
		fixed[field] = true
		return names
	}
	call := copyName
	if decl.Recv != nil && len(decl.Recv.List) > 0 {
		call = name(decl.Recv.List[0], 1000)[0] + "." + copyName
	}
	if decl.Type.TypeParams != nil {
		var params []string
		for _, field := range decl.Type.TypeParams.List {
			for _, ident := range field.Names {
				params = append(params, ident.Name)
			}
		}
		call += "[" + strings.Join(params, ", ") + "]"
	}
	var args []string
	for i, field := range decl.Type.Params.List {
		names := name(field, i)
		if _, variadic := field.Type.(*ast.Ellipsis); variadic {
			names[len(names)-1] += "..."
		}
		args = append(args, names...)
	}
	return call + "(" + strings.Join(args, ", ") + ")"
}

func recvFields(decl *ast.FuncDecl) []*ast.Field {
	if decl.Recv == nil {
		return nil
	}
	return decl.Recv.List
}

func (p pkg) schemata(dest string, excluded map[string]bool, out *json.Encoder) error {
	if len(p.names) == 0 {
		return fmt.Errorf("no Go file to mutate")
	}
	active := fmt.Sprintf(activeFile, p.files[p.names[0]].Name.Name)
	if err := os.WriteFile(filepath.Join(dest, "genmut_active.go"), []byte(active), 0o644); err != nil {
		return err
	}
	n := 0
	for _, name := range p.names {
		mutants, sites := p.mutants(name)
		source, err := os.ReadFile(p.fset.File(p.files[name].Pos()).Name())
		if err != nil {
			return err
		}
		var edits []edit
		var copies bytes.Buffer
		line := bytes.Count(source, []byte("\n")) + 1
		if !bytes.HasSuffix(source, []byte("\n")) {
			copies.WriteString("\n")
			line++
		}
		cases := map[*ast.FuncDecl][]string{}
		var order []*ast.FuncDecl
		for i, m := range mutants {
			decl, ok := sites[i].scope.(*ast.FuncDecl)
			if !ok || excluded[m.ID] {
				continue
			}
			n++
			copyName := fmt.Sprintf("genmut%d_%s", n, decl.Name.Name)
			original := decl.Name.Name
			decl.Name.Name = copyName
			sites[i].apply()
			var buf bytes.Buffer
			err := printer.Fprint(&buf, p.fset, decl)
			sites[i].revert()
			decl.Name.Name = original
			if err != nil {
				return err
			}
			buf.WriteString("\n\n")
			start := line
			line += bytes.Count(buf.Bytes(), []byte("\n"))
			copies.Write(buf.Bytes())
			_ = out.Encode(switched{m.ID, n, name, start, line - 1})
			call := dispatch(p.fset, decl, copyName, &edits, cases[decl] == nil)
			if decl.Type.Results != nil && len(decl.Type.Results.List) > 0 {
				call = "return " + call
			} else {
				call += "; return"
			}
			if cases[decl] == nil {
				order = append(order, decl)
			}
			cases[decl] = append(cases[decl], fmt.Sprintf("case %d: %s", n, call))
		}
		for _, decl := range order {
			brace := p.fset.Position(decl.Body.Lbrace).Offset + 1
			edits = append(edits, edit{brace, 0, " switch genmutActive { " + strings.Join(cases[decl], "; ") + " };"})
		}
		sort.SliceStable(edits, func(a, b int) bool { return edits[a].offset > edits[b].offset })
		text := append([]byte{}, source...)
		for _, e := range edits {
			text = append(text[:e.offset], append([]byte(e.insert), text[e.offset+e.drop:]...)...)
		}
		text = append(text, copies.Bytes()...)
		if err := os.WriteFile(filepath.Join(dest, name), text, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: gomutate list SRC_DIR | gomutate apply SRC_DIR ID DEST | gomutate schemata SRC_DIR DEST [EXCLUDED]")
		os.Exit(2)
	}
	p := load(os.Args[2])
	switch os.Args[1] {
	case "list":
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		for _, name := range p.names {
			mutants, _ := p.mutants(name)
			for _, m := range mutants {
				_ = enc.Encode(m)
			}
		}
	case "apply":
		id := os.Args[3]
		name := strings.Split(id, "/")[1]
		if p.files[name] == nil {
			fmt.Fprintln(os.Stderr, "no file", name)
			os.Exit(1)
		}
		mutants, sites := p.mutants(name)
		for i, m := range mutants {
			if m.ID == id {
				sites[i].apply()
				var buf bytes.Buffer
				if err := printer.Fprint(&buf, p.fset, p.files[name]); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				if err := os.WriteFile(filepath.Join(os.Args[4], name), buf.Bytes(), 0o644); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				return
			}
		}
		fmt.Fprintln(os.Stderr, "no generated mutant", id)
		os.Exit(1)
	case "schemata":
		excluded := map[string]bool{}
		if len(os.Args) > 4 {
			listed, err := os.ReadFile(os.Args[4])
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			for _, id := range strings.Fields(string(listed)) {
				excluded[id] = true
			}
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		if err := p.schemata(os.Args[3], excluded, enc); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		os.Exit(2)
	}
}
