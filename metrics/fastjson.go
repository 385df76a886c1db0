package metrics

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// A profile_export.jsonl of a long run holds hundreds of thousands of ~1 KB
// records, and encoding/json spends most of its time validating and
// skipping the fields the aggregation never reads. decodeRecordFast walks
// one line once, picks out the fields RecordMetadata and RecordMetrics
// hold and skips the rest. It gives up (ok=false) on anything unusual
// (escaped keys, a field of an unexpected type, a syntax error), and the
// caller then decodes the line with encoding/json, which also produces
// the error message.

type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// str consumes a string and returns its raw content (between the quotes)
// and whether it contains escapes.
func (s *jscan) str() (content []byte, escaped, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j], escaped, true
		}
	}
	return nil, false, false
}

// value consumes any value and returns its raw span.
func (s *jscan) value() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false
	}
	start := s.i
	switch c := s.b[s.i]; c {
	case '"':
		if _, _, ok := s.str(); !ok {
			return nil, false
		}
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, ok := s.str(); !ok {
					return nil, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return s.b[start:s.i], true
				}
			}
			s.i++
		}
		return nil, false
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.b[start:s.i], validLiteral(s.b[start:s.i])
			}
			s.i++
		}
		return s.b[start:s.i], validLiteral(s.b[start:s.i])
	}
	return s.b[start:s.i], true
}

// validLiteral accepts true, false, null and number-shaped spans (the
// number itself is parsed where it is used).
func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// object iterates the members of an object; field must consume the value.
func (s *jscan) object(field func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, esc, ok := s.str()
		if !ok || esc || s.peek() != ':' {
			return false
		}
		s.i++
		if !field(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// stringField decodes a string or null into dst.
func stringField(raw []byte, dst *string) bool {
	switch {
	case isNull(raw):
		return true
	case len(raw) >= 2 && raw[0] == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			*dst = string(raw[1 : len(raw)-1])
			return true
		}
		return json.Unmarshal(raw, dst) == nil
	}
	return false
}

func decodeMetricFast(s *jscan) (*MetricValue, bool) {
	m := &MetricValue{}
	if s.peek() != '{' {
		raw, ok := s.value()
		if !ok {
			return nil, false
		}
		m.Value = parseScalar(raw)
		return m, true
	}
	ok := s.object(func(key []byte) bool {
		raw, ok := s.value()
		if !ok {
			return false
		}
		switch string(key) {
		case "value":
			m.Value = parseScalar(raw)
		case "unit":
			if len(raw) > 0 && raw[0] == '"' {
				var u string
				if !stringField(raw, &u) {
					return false
				}
				m.Unit = u
			}
		}
		return true
	})
	return m, ok
}

// decodeRecordFast decodes one line; hasMetadata reports whether a
// metadata object was present.
func decodeRecordFast(line []byte, rec *Record) (hasMetadata, ok bool) {
	s := &jscan{b: line}
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "metadata":
			if s.peek() != '{' {
				return false // null or a wrong type: let encoding/json decide
			}
			hasMetadata = true
			md := &rec.Metadata
			return s.object(func(k []byte) bool {
				raw, ok := s.value()
				if !ok {
					return false
				}
				switch string(k) {
				case "x_request_id":
					return stringField(raw, &md.XRequestID)
				case "conversation_id":
					return stringField(raw, &md.ConversationID)
				case "turn_index":
					if isNull(raw) {
						md.TurnIndex = nil
						return true
					}
					f, err := strconv.ParseFloat(string(raw), 64)
					if err != nil {
						return false
					}
					md.TurnIndex = &f
				case "request_start_ns":
					md.RequestStartNs = parseScalar(raw)
				case "request_end_ns":
					md.RequestEndNs = parseScalar(raw)
				case "benchmark_phase":
					md.BenchmarkPhase = parseScalar(raw)
				case "was_cancelled":
					switch string(raw) {
					case "true":
						md.WasCancelled = true
					case "false", "null":
						md.WasCancelled = false
					default:
						return false
					}
				}
				return true
			})
		case "metrics":
			if s.peek() == 'n' {
				_, ok := s.value()
				return ok
			}
			mt := &rec.Metrics
			return s.object(func(k []byte) bool {
				var dst **MetricValue
				switch string(k) {
				case "time_to_first_token":
					dst = &mt.TimeToFirstToken
				case "request_latency":
					dst = &mt.RequestLatency
				case "inter_token_latency":
					dst = &mt.InterTokenLatency
				case "full_response_inter_token_latency":
					dst = &mt.FullResponseInterTokenLatency
				case "input_sequence_length":
					dst = &mt.InputSequenceLength
				case "output_sequence_length":
					dst = &mt.OutputSequenceLength
				default:
					_, ok := s.value()
					return ok
				}
				if s.peek() == 'n' { // null: as encoding/json, a nil pointer
					_, ok := s.value()
					*dst = nil
					return ok
				}
				m, ok := decodeMetricFast(s)
				*dst = m
				return ok
			})
		case "error":
			raw, ok := s.value()
			if !ok {
				return false
			}
			if isNull(raw) {
				rec.Error = nil
			} else {
				rec.Error = append(json.RawMessage(nil), raw...)
			}
			return true
		default:
			_, ok := s.value()
			return ok
		}
	})
	if ok && s.peek() != 0 {
		ok = false // trailing data
	}
	return hasMetadata, ok
}
