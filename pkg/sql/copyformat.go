package sql

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// COPY's data formats: PostgreSQL's text (tab-separated, backslash
// escapes, \N for NULL), CSV and binary.

type formatKind int

const (
	formatText formatKind = iota
	formatCSV
	formatBinary
)

type copyFormat struct {
	kind   formatKind
	delim  byte
	null   string
	quote  byte
	escape byte
}

func defaultFormat() copyFormat { return copyFormat{kind: formatText, delim: '\t', null: `\N`} }

// options applies COPY's WITH options.
func (ci *copyIn) options(opts []*pg.Node) error {
	var delim, null, quote, escape *string
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v := defElemText(d)
		switch d.Defname {
		case "format":
			switch strings.ToLower(v) {
			case "text":
				ci.format.kind = formatText
			case "csv":
				ci.format.kind = formatCSV
			case "binary":
				ci.format.kind = formatBinary
			default:
				return sqlerr.Errorf(sqlerr.InvalidParameterValue, "COPY format %q not recognized", v)
			}
		case "header":
			switch strings.ToLower(v) {
			case "", "true", "on", "1":
				ci.header = true
			case "false", "off", "0":
			case "match":
				return sqlerr.Unsupported("COPY HEADER MATCH")
			default:
				return sqlerr.Errorf(sqlerr.InvalidParameterValue, "%s requires a Boolean value", d.Defname)
			}
		case "delimiter":
			delim = &v
		case "null":
			null = &v
		case "quote":
			quote = &v
		case "escape":
			escape = &v
		case "freeze", "encoding":
			// FREEZE is a PostgreSQL storage hint; data is UTF-8.
			if d.Defname == "encoding" && !strings.EqualFold(strings.ReplaceAll(v, "-", ""), "utf8") {
				return sqlerr.Unsupported("COPY ENCODING other than UTF8")
			}
		default:
			return sqlerr.Errorf(sqlerr.SyntaxError, "option %q not recognized", d.Defname)
		}
	}
	f := &ci.format
	if f.kind == formatCSV {
		f.delim, f.null, f.quote, f.escape = ',', "", '"', '"'
	}
	if f.kind == formatBinary && (delim != nil || null != nil || ci.header) {
		return sqlerr.New(sqlerr.SyntaxError, "cannot specify DELIMITER, NULL or HEADER in BINARY mode")
	}
	if delim != nil {
		if len(*delim) != 1 {
			return sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		f.delim = (*delim)[0]
	}
	if null != nil {
		f.null = *null
	}
	for _, qe := range []struct {
		v   *string
		dst *byte
		opt string
	}{{quote, &f.quote, "quote"}, {escape, &f.escape, "escape"}} {
		if qe.v == nil {
			continue
		}
		if f.kind != formatCSV {
			return sqlerr.Errorf(sqlerr.FeatureNotSupported, "COPY %s available only in CSV mode", qe.opt)
		}
		if len(*qe.v) != 1 {
			return sqlerr.Errorf(sqlerr.FeatureNotSupported, "COPY %s must be a single one-byte character", qe.opt)
		}
		*qe.dst = (*qe.v)[0]
	}
	return nil
}

// lineEnd returns the index of the newline ending the first record of
// data, or -1 when it is incomplete. In CSV a quoted field may span
// lines.
func (f *copyFormat) lineEnd(data []byte) int {
	if f.kind != formatCSV {
		for i, c := range data {
			if c == '\n' {
				return i
			}
		}
		return -1
	}
	inQuote := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inQuote && c == f.escape && f.escape != f.quote && i+1 < len(data) && (data[i+1] == f.quote || data[i+1] == f.escape):
			i++
		case c == f.quote:
			inQuote = !inQuote
		case c == '\n' && !inQuote:
			return i
		}
	}
	return -1
}

// split splits a record into fields; a nil field is NULL.
func (f *copyFormat) split(line string) ([]*string, error) {
	if f.kind == formatCSV {
		return f.splitCSV(line)
	}
	var out []*string
	for _, raw := range strings.Split(line, string(f.delim)) {
		if raw == f.null {
			out = append(out, nil)
			continue
		}
		v, err := unescapeText(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, &v)
	}
	return out, nil
}

// unescapeText undoes the text format's backslash escapes.
func unescapeText(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('x')
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// splitCSV splits a CSV record: an unquoted field equal to the NULL
// string is NULL; a quoted one never is.
func (f *copyFormat) splitCSV(line string) ([]*string, error) {
	var out []*string
	i := 0
	for {
		var b strings.Builder
		quoted := false
		for i < len(line) && line[i] != f.delim {
			c := line[i]
			if c != f.quote {
				b.WriteByte(c)
				i++
				continue
			}
			quoted = true
			i++
			for {
				if i >= len(line) {
					return nil, sqlerr.New(sqlerr.BadCopyFileFormat, "unterminated CSV quoted field")
				}
				c := line[i]
				if c == f.escape && i+1 < len(line) && (line[i+1] == f.quote || line[i+1] == f.escape) && (f.escape != f.quote || line[i+1] == f.quote) {
					b.WriteByte(line[i+1])
					i += 2
					continue
				}
				if c == f.quote {
					i++
					break
				}
				b.WriteByte(c)
				i++
			}
		}
		v := b.String()
		if !quoted && v == f.null {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		if i >= len(line) {
			return out, nil
		}
		i++ // the delimiter
	}
}

// binarySignature starts PostgreSQL's binary COPY data.
const binarySignature = "PGCOPY\n\377\r\n\x00"

// consumeBinary parses the complete tuples buffered.
func (ci *copyIn) consumeBinary() error {
	if !ci.binaryStarted {
		if len(ci.rest) < len(binarySignature)+8 {
			return nil
		}
		if string(ci.rest[:len(binarySignature)]) != binarySignature {
			return sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
		}
		ext := binary.BigEndian.Uint32(ci.rest[len(binarySignature)+4:])
		hdr := len(binarySignature) + 8 + int(ext)
		if len(ci.rest) < hdr {
			return nil
		}
		ci.rest = ci.rest[hdr:]
		ci.binaryStarted = true
	}
	for !ci.ended && len(ci.rest) >= 2 {
		n := int(int16(binary.BigEndian.Uint16(ci.rest)))
		if n == -1 {
			ci.ended = true
			ci.rest = ci.rest[2:]
			break
		}
		vals, used, ok, err := ci.binaryTuple(n)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		ci.rest = ci.rest[used:]
		if err := ci.addRow(vals, ""); err != nil {
			return err
		}
	}
	if ci.ended && len(ci.rest) > 0 {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "received copy data after EOF marker")
	}
	return nil
}

// binaryTuple decodes the tuple of n fields at the start of ci.rest, or
// reports ok=false when it is incomplete.
func (ci *copyIn) binaryTuple(n int) (vals []row.Datum, used int, ok bool, err error) {
	ci.line++
	defer func() {
		if !ok {
			ci.line--
		}
	}()
	if n != len(ci.cols) {
		return nil, 0, false, ci.lineErr(sqlerr.Errorf(sqlerr.BadCopyFileFormat, "row field count is %d, expected %d", n, len(ci.cols)), "", "")
	}
	p := 2
	for i := 0; i < n; i++ {
		if len(ci.rest) < p+4 {
			return nil, 0, false, nil
		}
		l := int(int32(binary.BigEndian.Uint32(ci.rest[p:])))
		p += 4
		if l < 0 {
			vals = append(vals, row.Null())
			continue
		}
		if len(ci.rest) < p+l {
			return nil, 0, false, nil
		}
		d, err := ci.binaryValue(i, ci.rest[p:p+l])
		if err != nil {
			return nil, 0, true, ci.lineErr(err, ci.it.Desc.Name(ci.cols[i]), "")
		}
		vals = append(vals, d)
		p += l
	}
	return vals, p, true, nil
}

// postgresEpochMicros is 2000-01-01 in microseconds since the Unix
// epoch, the zero of binary timestamps.
const postgresEpochMicros = 946684800 * 1_000_000

// binaryValue decodes a binary field of data column i and applies the
// column's varchar(n)/char(n) modifier as an INSERT would.
func (ci *copyIn) binaryValue(i int, v []byte) (row.Datum, error) {
	d, err := ci.binaryDatum(i, v)
	col := ci.cols[i]
	if err != nil || col >= len(ci.rules.mods) {
		return d, err
	}
	if d, err = ci.rules.mods[col].AssignDatum(d); err != nil {
		return row.Null(), sqlerr.Convert(err)
	}
	return d, nil
}

// binaryDatum decodes a binary field of data column i by its column's
// type; integers and floats by their width, as the client may send any
// of int2/int4/int8 and float4/float8.
func (ci *copyIn) binaryDatum(i int, v []byte) (row.Datum, error) {
	col := ci.cols[i]
	bad := func() (row.Datum, error) {
		return row.Null(), sqlerr.Errorf(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format (%d bytes)", len(v))
	}
	switch ci.it.Desc.Types[col].Type {
	case row.TypeBool:
		if len(v) != 1 {
			return bad()
		}
		return row.Bool(v[0] != 0), nil
	case row.TypeInt64:
		var x int64
		switch len(v) {
		case 2:
			x = int64(int16(binary.BigEndian.Uint16(v)))
		case 4:
			x = int64(int32(binary.BigEndian.Uint32(v)))
		case 8:
			x = int64(binary.BigEndian.Uint64(v))
		default:
			return bad()
		}
		return ci.narrow(col, row.Int64(x))
	case row.TypeFloat64:
		switch len(v) {
		case 4:
			return row.Float64(float64(math.Float32frombits(binary.BigEndian.Uint32(v)))), nil
		case 8:
			return row.Float64(math.Float64frombits(binary.BigEndian.Uint64(v))), nil
		}
		return bad()
	case row.TypeText:
		return row.Text(string(v)), nil
	case row.TypeBytes:
		return row.Bytes(v), nil
	case row.TypeUUID:
		if len(v) != 16 {
			return bad()
		}
		return row.UUID([16]byte(v)), nil
	case row.TypeJSONB:
		// Binary jsonb is a version byte (1) and the text form.
		if len(v) == 0 || v[0] != 1 {
			return bad()
		}
		return ci.convert(i, string(v[1:]))
	case row.TypeJSON:
		return ci.convert(i, string(v)) // binary json is the text form
	case row.TypeTimestamp:
		if len(v) != 8 {
			return bad()
		}
		return row.Timestamp(int64(binary.BigEndian.Uint64(v)) + postgresEpochMicros), nil
	}
	if ci.decode != nil {
		d, err := ci.decode(v, ci.it.Desc.Types[col].Type)
		if err != nil {
			return row.Null(), err
		}
		return ci.narrow(col, d)
	}
	return row.Null(), sqlerr.Unsupported("binary COPY of type " + ci.it.Desc.Types[col].Type.String())
}
