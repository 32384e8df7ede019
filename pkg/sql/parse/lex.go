package parse

import (
	"strings"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// tokKind classifies a token of the pre-parser's lexer.
type tokKind int

const (
	tokIdent  tokKind = iota // unquoted identifier or keyword, folded to lower case
	tokQIdent                // "quoted identifier", case preserved
	tokString                // 'string literal', unescaped
	tokNumber                // numeric literal
	tokSymbol                // one punctuation character
)

// token is one lexeme with its byte span in the statement text.
type token struct {
	kind       tokKind
	text       string
	start, end int
}

// is reports whether t is the unquoted keyword kw (lower case).
func (t token) is(kw string) bool { return t.kind == tokIdent && t.text == kw }

// sym reports whether t is the symbol s.
func (t token) sym(s string) bool { return t.kind == tokSymbol && t.text == s }

// lex splits a statement into tokens. It only needs to be right for the
// statements the pre-parser handles; everything else goes to the Postgres
// grammar, which reports its own errors.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, syntaxErr(i, "unterminated /* comment")
			}
			i += end + 4
		case (c == 'e' || c == 'E') && i+1 < len(s) && s[i+1] == '\'':
			// E'...' strings: backslash escapes the next byte.
			j := i + 2
			closed := false
			for j < len(s) {
				if s[j] == '\\' {
					j += 2
					continue
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				j++
			}
			if !closed {
				return nil, syntaxErr(i, "unterminated quoted string")
			}
			toks = append(toks, token{tokString, s[i:j], i, j})
			i = j
		case c == '$' && dollarTag(s[i:]) != "":
			tag := dollarTag(s[i:])
			end := strings.Index(s[i+len(tag):], tag)
			if end < 0 {
				return nil, syntaxErr(i, "unterminated dollar-quoted string")
			}
			j := i + len(tag) + end + len(tag)
			toks = append(toks, token{tokString, s[i+len(tag) : j-len(tag)], i, j})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tokIdent, strings.ToLower(s[i:j]), i, j})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			toks = append(toks, token{tokNumber, s[i:j], i, j})
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, syntaxErr(i, "unterminated quoted string")
			}
			k := tokString
			if c == '"' {
				k = tokQIdent
			}
			toks = append(toks, token{k, b.String(), i, j})
			i = j
		default:
			toks = append(toks, token{tokSymbol, string(c), i, i + 1})
			i++
		}
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// syntaxErr returns a 42601 error at byte offset pos (reported 1-based).
func syntaxErr(pos int, msg string) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: msg, Position: pos + 1}
}

// dollarTag returns the opening $tag$ at the start of s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		if s[j] == '$' {
			return s[:j+1]
		}
		if !isIdentPart(s[j]) || s[j] == '$' {
			return ""
		}
	}
	return ""
}

// split cuts text into statements at semicolons outside quotes, comments
// and parentheses.
func split(text string) ([]string, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	var out []string
	start, depth := 0, 0
	for _, t := range toks {
		switch {
		case t.sym("("):
			depth++
		case t.sym(")"):
			depth--
		case t.sym(";") && depth <= 0:
			out = append(out, text[start:t.start])
			start, depth = t.end, 0
		}
	}
	return append(out, text[start:]), nil
}
