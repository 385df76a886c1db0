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
	start := 0 // s[start:i] needs no escaping and is not yet appended
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && (c < 0x7f || c == 0x7f && !asciiOnly) {
			i++
			continue
		}
		if c >= utf8.RuneSelf && !asciiOnly {
			if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		b = append(b, s[start:i]...)
		i++
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < utf8.RuneSelf { // other control characters, and DEL with asciiOnly
				b = appendU4(b, rune(c))
				break
			}
			r, size := utf8.DecodeRuneInString(s[i-1:])
			i += size - 1
			switch {
			case !asciiOnly: // an invalid byte
				b = append(b, "\ufffd"...)
			case r > 0xffff:
				r -= 0x10000
				b = appendU4(b, 0xd800+(r>>10))
				b = appendU4(b, 0xdc00+(r&0x3ff))
			default:
				b = appendU4(b, r)
			}
		}
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendU4 appends r (at most U+FFFF) as \uXXXX, lower-case hex as Python
// writes it.
func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}
