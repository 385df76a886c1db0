package power

import (
	"errors"
	"strings"
)

// fieldSizeLimit is Python's csv.field_size_limit() default: a longer
// field is a csv.Error, which InferenceX counts as an unreadable file.
const fieldSizeLimit = 131072

var errFieldTooLarge = errors.New("field larger than field limit (131072)")

// csvTable is a CSV file as csv.DictReader(f, skipinitialspace=True) reads
// it after the adapter strips the header names: rows are maps from header
// name to cell (a repeated header name takes the later column's cell, a
// short row lacks the missing names), blank lines are skipped.
type csvTable struct {
	header []string
	rows   []map[string]string
}

// readCSV parses text with the excel dialect's rules (',' delimiter, '"'
// quoting with doubled quotes, any of \r\n, \n, \r ending a record, spaces
// after a delimiter skipped, a quote inside an unquoted field kept as is,
// an unterminated quoted field ending at the end of the text).
func readCSV(text string) (*csvTable, error) {
	records, err := csvRecords(text)
	if err != nil {
		return nil, err
	}
	t := &csvTable{}
	if len(records) == 0 {
		return t, nil
	}
	// DictReader takes the first record as the header, even an empty one.
	for _, h := range records[0] {
		t.header = append(t.header, strings.TrimSpace(h))
	}
	for _, rec := range records[1:] {
		if len(rec) == 0 {
			continue
		}
		row := make(map[string]string, len(t.header))
		for i, name := range t.header {
			if i < len(rec) {
				row[name] = rec[i]
			}
		}
		t.rows = append(t.rows, row)
	}
	return t, nil
}

// csvRecords splits text into records; a blank line is an empty record.
func csvRecords(text string) ([][]string, error) {
	const (
		startRecord = iota
		startField
		inField
		inQuoted
		quoteInQuoted
	)
	var (
		records [][]string
		rec     []string
		field   strings.Builder
		state   = startRecord
	)
	save := func() error {
		if field.Len() > fieldSizeLimit {
			return errFieldTooLarge
		}
		rec = append(rec, field.String())
		field.Reset()
		return nil
	}
	add := func(c byte) error {
		if field.Len() >= fieldSizeLimit {
			return errFieldTooLarge
		}
		field.WriteByte(c)
		return nil
	}
	endRecord := func() {
		records = append(records, rec)
		rec = nil
		state = startRecord
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		eol := c == '\n' || c == '\r'
		if eol && state != inQuoted {
			if c == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			if state != startRecord {
				if err := save(); err != nil {
					return nil, err
				}
			}
			endRecord()
			continue
		}
		var err error
		switch state {
		case startRecord, startField:
			switch c {
			case '"':
				state = inQuoted
			case ' ':
				state = startField
			case ',':
				err = save()
				state = startField
			default:
				err = add(c)
				state = inField
			}
		case inField:
			if c == ',' {
				err = save()
				state = startField
			} else {
				err = add(c)
			}
		case inQuoted:
			if c == '"' {
				state = quoteInQuoted
			} else {
				err = add(c)
			}
		case quoteInQuoted:
			switch c {
			case '"':
				err = add(c)
				state = inQuoted
			case ',':
				err = save()
				state = startField
			default:
				err = add(c)
				state = inField
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if state != startRecord {
		if err := save(); err != nil {
			return nil, err
		}
		records = append(records, rec)
	}
	return records, nil
}
