package configs_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/configs"
)

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		name string
		err  *configs.Error
		want string
	}{
		{"full", &configs.Error{File: "a.yaml", Line: 3, Col: 7, Key: "k.x", Msg: "want an int"}, "a.yaml:3:7: k.x: want an int"},
		{"no column", &configs.Error{File: "a.jsonl", Line: 3, Msg: "bad record"}, "a.jsonl:3: bad record"},
		{"whole file", &configs.Error{File: "a.yaml", Msg: "empty"}, "a.yaml: empty"},
		{"cause", &configs.Error{File: "a.jsonl", Line: 2, Err: io.ErrUnexpectedEOF}, "a.jsonl:2: unexpected EOF"},
		{"message over cause", &configs.Error{File: "a.yaml", Line: 2, Key: "conc-list", Msg: "bad list", Err: io.ErrUnexpectedEOF}, "a.yaml:2: conc-list: bad list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Error())
			assert.Equal(t, c.err.Err != nil, errors.Is(c.err, io.ErrUnexpectedEOF))
		})
	}
}
