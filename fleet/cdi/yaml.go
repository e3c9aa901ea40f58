package cdi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// flagshim writes YAML itself rather than adding a YAML library to the
// module: a spec is a small tree of maps, lists and strings. The writer
// prints block style with every string double-quoted as JSON quotes it (a
// JSON string is a YAML double-quoted scalar). The reader takes the block
// YAML a person or another tool writes for a CDI spec (maps, lists, plain,
// single- and double-quoted scalars, comments, flow lists of scalars and
// empty flow collections) and refuses, with the line, what it does not
// read (anchors, tags, block scalars, flow maps, several documents).

// tree is YAML's and JSON's shared model, keys in order.
type tree struct {
	kind  byte // 'm' a map, 's' a list, 'v' a scalar
	keys  []string
	vals  []*tree // a map's values, a list's items
	value []byte  // a scalar as JSON text
}

// maxDepth bounds the nesting the reader accepts (a spec is 6 deep).
const maxDepth = 32

// yamlOf is s in block YAML: the fields flagshim writes directly, the
// others (annotations, hooks, ...) through the generic tree.
func yamlOf(s *Spec) ([]byte, error) {
	b := bytes.NewBuffer(make([]byte, 0, 4096))
	b.WriteString("cdiVersion: ")
	quote(b, string(s.Version))
	b.WriteString("\nkind: ")
	quote(b, s.Kind)
	b.WriteByte('\n')
	if err := rawField(b, "annotations", s.Annotations, 0); err != nil {
		return nil, err
	}
	b.WriteString("devices:")
	if len(s.Devices) == 0 {
		b.WriteString(" []")
	}
	b.WriteByte('\n')
	for i := range s.Devices {
		d := &s.Devices[i]
		b.WriteString("  - name: ")
		quote(b, string(d.Name))
		b.WriteByte('\n')
		if err := rawField(b, "annotations", d.Annotations, 4); err != nil {
			return nil, err
		}
		b.WriteString("    containerEdits:")
		if d.ContainerEdits.empty() {
			b.WriteString(" {}")
		}
		b.WriteByte('\n')
		if err := editsYAML(b, &d.ContainerEdits, 6); err != nil {
			return nil, err
		}
	}
	if !s.ContainerEdits.empty() {
		b.WriteString("containerEdits:\n")
		if err := editsYAML(b, &s.ContainerEdits, 2); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func editsYAML(b *bytes.Buffer, e *ContainerEdits, indent int) error {
	pad := strings.Repeat(" ", indent)
	if len(e.Env) > 0 {
		b.WriteString(pad + "env:")
		list(b, e.Env, indent+2)
	}
	if len(e.DeviceNodes) > 0 {
		b.WriteString(pad + "deviceNodes:\n")
		for _, n := range e.DeviceNodes {
			j, err := json.Marshal(n)
			if err != nil {
				return err
			}
			if err := itemYAML(b, j, indent+2); err != nil {
				return err
			}
		}
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"netDevices", e.NetDevices}, {"hooks", e.Hooks}} {
		if err := rawField(b, f.name, f.raw, indent); err != nil {
			return err
		}
	}
	if len(e.Mounts) > 0 {
		b.WriteString(pad + "mounts:\n")
		for _, m := range e.Mounts {
			b.WriteString(pad + "  - hostPath: ")
			quote(b, m.HostPath)
			b.WriteString("\n" + pad + "    containerPath: ")
			quote(b, m.ContainerPath)
			b.WriteByte('\n')
			if len(m.Options) > 0 {
				b.WriteString(pad + "    options:")
				list(b, m.Options, indent+6)
			}
			if m.Type != "" {
				b.WriteString(pad + "    type: ")
				quote(b, m.Type)
				b.WriteByte('\n')
			}
		}
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"intelRdt", e.IntelRdt}, {"additionalGids", e.AdditionalGIDs}} {
		if err := rawField(b, f.name, f.raw, indent); err != nil {
			return err
		}
	}
	return nil
}

// list writes what follows "key:" for a list of strings: on the line when
// short, else one item a line.
func list(b *bytes.Buffer, items []string, indent int) {
	n := 0
	for _, s := range items {
		n += len(s) + 4
	}
	if n <= 60 {
		b.WriteString(" [")
		for i, s := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			quote(b, s)
		}
		b.WriteString("]\n")
		return
	}
	b.WriteByte('\n')
	for _, s := range items {
		b.WriteString(strings.Repeat(" ", indent) + "- ")
		quote(b, s)
		b.WriteByte('\n')
	}
}

// itemYAML writes the JSON object j as a list item at indent.
func itemYAML(b *bytes.Buffer, j []byte, indent int) error {
	t, err := jsonTree(json.NewDecoder(bytes.NewReader(j)), 0)
	if err != nil {
		return err
	}
	emit(b, &tree{kind: 's', vals: []*tree{t}}, indent)
	return nil
}

// rawField writes "name:" and the JSON value raw, where raw is not empty.
func rawField(b *bytes.Buffer, name string, raw json.RawMessage, indent int) error {
	if len(raw) == 0 {
		return nil
	}
	t, err := jsonTree(json.NewDecoder(bytes.NewReader(raw)), 0)
	if err != nil {
		return err
	}
	emit(b, &tree{kind: 'm', keys: []string{name}, vals: []*tree{t}}, indent)
	return nil
}

// quote writes s as a JSON string, which is a YAML double-quoted scalar.
func quote(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, _ := scalarJSON(s)
			b.Write(q)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// jsonTree reads one JSON value from d, keys in order.
func jsonTree(d *json.Decoder, depth int) (*tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		t := &tree{kind: 's'}
		if tok == '{' {
			t.kind = 'm'
		}
		for d.More() {
			if t.kind == 'm' {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				t.keys = append(t.keys, k.(string))
			}
			v, err := jsonTree(d, depth+1)
			if err != nil {
				return nil, err
			}
			t.vals = append(t.vals, v)
		}
		_, err := d.Token() // the closing delimiter
		return t, err
	default:
		v, err := scalarJSON(tok)
		return &tree{kind: 'v', value: v}, err
	}
}

func scalarJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// plainKey says whether a key is written without quotes.
func plainKey(k string) bool {
	if k == "" || !(k[0] == '_' || 'a' <= k[0] && k[0] <= 'z' || 'A' <= k[0] && k[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '.' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// emit writes t at indent in block style.
func emit(b *bytes.Buffer, t *tree, indent int) {
	pad := strings.Repeat(" ", indent)
	switch t.kind {
	case 'm':
		for i, k := range t.keys {
			if !plainKey(k) {
				q, _ := scalarJSON(k)
				k = string(q)
			}
			b.WriteString(pad + k + ":")
			emitValue(b, t.vals[i], indent+2)
		}
	case 's':
		for _, v := range t.vals {
			if v.kind == 'v' || len(v.vals) == 0 {
				b.WriteString(pad + "-")
				emitValue(b, v, indent+2)
				continue
			}
			// "- " then the item's first line, the rest under it.
			var sub bytes.Buffer
			emit(&sub, v, indent+2)
			b.WriteString(pad + "- ")
			b.Write(sub.Bytes()[indent+2:])
		}
	}
}

// emitValue writes what follows "key:" or "-".
func emitValue(b *bytes.Buffer, v *tree, indent int) {
	switch {
	case v.kind == 'v':
		b.WriteString(" " + string(v.value) + "\n")
	case len(v.vals) == 0 && v.kind == 'm':
		b.WriteString(" {}\n")
	case len(v.vals) == 0:
		b.WriteString(" []\n")
	case v.kind == 's' && flowable(v):
		b.WriteString(" [")
		for i, x := range v.vals {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(x.value)
		}
		b.WriteString("]\n")
	default:
		b.WriteString("\n")
		emit(b, v, indent)
	}
}

// flowable says whether the list t is short scalars, written on one line
// (["ro", "nosuid"]).
func flowable(t *tree) bool {
	n := 0
	for _, x := range t.vals {
		if x.kind != 'v' {
			return false
		}
		n += len(x.value) + 2
	}
	return n <= 60
}

// treeJSON is t as JSON text.
func treeJSON(b *bytes.Buffer, t *tree) {
	switch t.kind {
	case 'v':
		b.Write(t.value)
	case 'm':
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := scalarJSON(k)
			b.Write(q)
			b.WriteByte(':')
			treeJSON(b, t.vals[i])
		}
		b.WriteByte('}')
	case 's':
		b.WriteByte('[')
		for i, v := range t.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			treeJSON(b, v)
		}
		b.WriteByte(']')
	}
}

// line is one significant line of a YAML text.
type line struct {
	n      int    // its number, from 1
	indent int    // leading spaces
	text   string // the rest, without a trailing comment
}

// yamlParser reads the block YAML described above.
type yamlParser struct {
	lines []line
	i     int
}

func errAt(l line, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrNotCDI, l.n, fmt.Sprintf(format, args...))
}

// parseYAML reads data into a tree.
func parseYAML(data []byte) (*tree, error) {
	p := &yamlParser{}
	started := false
	for n, raw := range strings.Split(string(data), "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if strings.HasPrefix(body, "\t") {
			return nil, errAt(line{n: n + 1}, "a tab in the indentation")
		}
		text, err := stripComment(body)
		if err != nil {
			return nil, errAt(line{n: n + 1}, "%v", err)
		}
		switch {
		case text == "":
			continue
		case indent == 0 && (text == "---" || strings.HasPrefix(text, "--- ")):
			if started || len(p.lines) > 0 {
				return nil, errAt(line{n: n + 1}, "a second YAML document: a CDI spec file holds one")
			}
			started = true
			if rest := strings.TrimSpace(text[3:]); rest != "" {
				return nil, errAt(line{n: n + 1}, "content after ---")
			}
			continue
		case indent == 0 && text == "...":
			return nil, errAt(line{n: n + 1}, "a document end marker")
		case strings.HasPrefix(text, "%"):
			return nil, errAt(line{n: n + 1}, "a YAML directive")
		}
		p.lines = append(p.lines, line{n: n + 1, indent: indent, text: text})
	}
	if len(p.lines) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrNotCDI)
	}
	t, err := p.block(p.lines[0].indent, 0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		return nil, errAt(p.lines[p.i], "unexpected indentation")
	}
	return t, nil
}

// stripComment removes a comment (a '#' at the start or after a space,
// outside quotes) and trailing spaces.
func stripComment(s string) (string, error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0 && c == quote:
			if quote == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			quote = 0
		case quote != 0:
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimRight(s[:i], " \t"), nil
		case (c == '"' || c == '\'') && (i == 0 || strings.ContainsRune(" \t[,:-", rune(s[i-1]))):
			quote = c
		}
	}
	return strings.TrimRight(s, " \t"), nil
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// block reads the map or list at indent.
func (p *yamlParser) block(indent, depth int) (*tree, error) {
	if depth > maxDepth {
		return nil, errAt(p.lines[p.i], "nested more than %d deep", maxDepth)
	}
	if isSeqItem(p.lines[p.i].text) {
		return p.seq(indent, depth)
	}
	return p.mapping(indent, depth)
}

func (p *yamlParser) seq(indent, depth int) (*tree, error) {
	t := &tree{kind: 's'}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, errAt(l, "unexpected indentation")
		}
		if !isSeqItem(l.text) {
			break
		}
		rest := strings.TrimLeft(strings.TrimPrefix(l.text, "-"), " ")
		var v *tree
		var err error
		switch {
		case rest == "":
			p.i++
			v, err = p.nested(indent, depth, false)
		case isSeqItem(rest) || mapKey(rest) >= 0:
			// The item is a block that starts on the dash's line: read it
			// as if it started on a line of its own at its column.
			col := l.indent + len(l.text) - len(rest)
			p.lines[p.i] = line{n: l.n, indent: col, text: rest}
			v, err = p.block(col, depth+1)
		default:
			p.i++
			v, err = scalar(l, rest)
		}
		if err != nil {
			return nil, err
		}
		t.vals = append(t.vals, v)
	}
	return t, nil
}

func (p *yamlParser) mapping(indent, depth int) (*tree, error) {
	t := &tree{kind: 'm'}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent || (l.indent == indent && isSeqItem(l.text)) {
			break
		}
		if l.indent > indent {
			return nil, errAt(l, "unexpected indentation")
		}
		at := mapKey(l.text)
		if at < 0 {
			return nil, errAt(l, "want \"key: value\", got %q", l.text)
		}
		key, err := keyOf(l, l.text[:at])
		if err != nil {
			return nil, err
		}
		for _, k := range t.keys {
			if k == key {
				return nil, errAt(l, "the key %q twice", key)
			}
		}
		rest := strings.TrimSpace(l.text[at+1:])
		p.i++
		var v *tree
		if rest == "" {
			v, err = p.nested(indent, depth, true)
		} else {
			v, err = scalar(l, rest)
		}
		if err != nil {
			return nil, err
		}
		t.keys = append(t.keys, key)
		t.vals = append(t.vals, v)
	}
	return t, nil
}

// nested reads the value of a key or dash whose line ends there: a block
// indented more, for a key a list at the same indent (YAML allows
// "key:\n- a"), or else null.
func (p *yamlParser) nested(indent, depth int, key bool) (*tree, error) {
	if p.i < len(p.lines) {
		next := p.lines[p.i]
		if next.indent > indent || (key && next.indent == indent && isSeqItem(next.text)) {
			return p.block(next.indent, depth+1)
		}
	}
	return &tree{kind: 'v', value: []byte("null")}, nil
}

// mapKey is the index of the ':' that ends a map key in text (followed by
// a space or the end), outside quotes; -1 when text is no "key: value".
func mapKey(text string) int {
	if text == "" || strings.ContainsRune("[{", rune(text[0])) {
		return -1
	}
	if text[0] == '"' || text[0] == '\'' {
		end := quotedEnd(text)
		if end < 0 || end+1 >= len(text) || text[end+1] != ':' {
			return -1
		}
		if end+2 == len(text) || text[end+2] == ' ' {
			return end + 1
		}
		return -1
	}
	for i := 0; i < len(text); i++ {
		if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ') {
			return i
		}
	}
	return -1
}

// quotedEnd is the index of the quote that closes the scalar text starts
// with; -1 when it is not closed on this line.
func quotedEnd(text string) int {
	q := text[0]
	for i := 1; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			i++
		case text[i] == q && q == '\'' && i+1 < len(text) && text[i+1] == '\'':
			i++
		case text[i] == q:
			return i
		}
	}
	return -1
}

func keyOf(l line, k string) (string, error) {
	k = strings.TrimSpace(k)
	if k == "" || k[0] == '?' {
		return "", errAt(l, "a complex or empty key")
	}
	v, err := scalar(l, k)
	if err != nil {
		return "", err
	}
	var s string
	if json.Unmarshal(v.value, &s) != nil {
		s = string(v.value) // a plain key that reads as a number: its text
	}
	return s, nil
}

var (
	intRE   = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,17})$`)
	floatRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]+$`)
)

// scalar reads one scalar or flow collection, the whole of text.
func scalar(l line, text string) (*tree, error) {
	switch c := text[0]; {
	case c == '"' || c == '\'':
		end := quotedEnd(text)
		if end < 0 {
			return nil, errAt(l, "a quoted scalar that does not end on its line")
		}
		if strings.TrimSpace(text[end+1:]) != "" {
			return nil, errAt(l, "text after a quoted scalar: %q", text[end+1:])
		}
		s, err := unquote(text[:end+1])
		if err != nil {
			return nil, errAt(l, "%v", err)
		}
		v, _ := scalarJSON(s)
		return &tree{kind: 'v', value: v}, nil
	case c == '[':
		return flowSeq(l, text)
	case text == "{}":
		return &tree{kind: 'm'}, nil
	case strings.ContainsRune("{&*!|>@`%", rune(c)):
		return nil, errAt(l, "%q: flow maps, anchors, aliases, tags and block scalars are not read; write plain block YAML (or JSON)", text)
	}
	switch text {
	case "~", "null", "Null", "NULL":
		return &tree{kind: 'v', value: []byte("null")}, nil
	case "true", "True", "TRUE":
		return &tree{kind: 'v', value: []byte("true")}, nil
	case "false", "False", "FALSE":
		return &tree{kind: 'v', value: []byte("false")}, nil
	}
	if intRE.MatchString(text) || floatRE.MatchString(text) {
		return &tree{kind: 'v', value: []byte(text)}, nil
	}
	v, _ := scalarJSON(text)
	return &tree{kind: 'v', value: v}, nil
}

// unquote reads a single- or double-quoted scalar. Double-quoted escapes
// are JSON's (YAML's others are refused).
func unquote(q string) (string, error) {
	if q[0] == '\'' {
		return strings.ReplaceAll(q[1:len(q)-1], "''", "'"), nil
	}
	var s string
	if err := json.Unmarshal([]byte(q), &s); err != nil {
		return "", fmt.Errorf("the double-quoted scalar %s: %v (escapes are read as JSON's)", q, err)
	}
	return s, nil
}

// flowSeq reads "[a, "b", 'c']": a flow list of scalars.
func flowSeq(l line, text string) (*tree, error) {
	if !strings.HasSuffix(text, "]") {
		return nil, errAt(l, "a flow list that does not end on its line")
	}
	t := &tree{kind: 's'}
	body := strings.TrimSpace(text[1 : len(text)-1])
	for body != "" {
		var item string
		if body[0] == '"' || body[0] == '\'' {
			end := quotedEnd(body)
			if end < 0 {
				return nil, errAt(l, "an unterminated quoted item in a flow list")
			}
			item, body = body[:end+1], strings.TrimSpace(body[end+1:])
		} else {
			i := strings.IndexByte(body, ',')
			if i < 0 {
				i = len(body)
			}
			item, body = strings.TrimSpace(body[:i]), body[i:]
		}
		if item == "" || strings.ContainsAny(item[:1], "[{") {
			return nil, errAt(l, "a flow list holds scalars only here")
		}
		v, err := scalar(l, item)
		if err != nil {
			return nil, err
		}
		t.vals = append(t.vals, v)
		if body != "" {
			if body[0] != ',' {
				return nil, errAt(l, "want ',' in a flow list, got %q", body)
			}
			body = strings.TrimSpace(body[1:])
		}
	}
	return t, nil
}

// decodeStrict reads JSON text into v, refusing unknown fields and
// anything after the value.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("text after the spec")
	}
	return nil
}
