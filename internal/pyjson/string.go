package pyjson

import "unicode/utf8"

// AppendString appends s as a JSON string the way Python's json module
// writes it: '"', '\\', \n, \r, \t, \b and \f get short escapes, other
// control characters \u00XX. With asciiOnly (json.dumps' default
// ensure_ascii=True) DEL and every non-ASCII character are written as
// \uXXXX, characters above U+FFFF as a UTF-16 surrogate pair; without it
// (ensure_ascii=False, and pydantic's model_dump_json) they are written as
// UTF-8. Invalid UTF-8 is written as U+FFFD. Unlike encoding/json, '<', '>'
// and '&' are left alone.
//
//	pyjson.AppendString(nil, "ü\n", true)  // "\u00fc\n"
//	pyjson.AppendString(nil, "ü\n", false) // "ü\n"
func AppendString(b []byte, s string, asciiOnly bool) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20, c == 0x7f && asciiOnly:
				b = appendU4(b, rune(c))
			default:
				b = append(b, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case !asciiOnly:
			b = utf8.AppendRune(b, r) // an invalid byte decodes as U+FFFD
		case r > 0xffff:
			r -= 0x10000
			b = appendU4(b, 0xd800+(r>>10))
			b = appendU4(b, 0xdc00+(r&0x3ff))
		default:
			b = appendU4(b, r)
		}
	}
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendU4 appends r (at most U+FFFF) as \uXXXX, lower-case hex as Python
// writes it.
func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
