package checkpoint

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gocolly/colly/v2"
)

// appendRequest appends r as encoding/json marshals its serialRequest,
// byte for byte, without reflection: json.Marshal cost a request several
// microseconds, much of it growing the stack of the goroutine Colly had
// just started for the request. It handles requests whose Ctx values are
// all strings, bools or nil (an empty Ctx, as most are, included) and
// reports false for any other, which marshalRequest then gives to
// encoding/json.
func appendRequest(dst []byte, r *colly.Request, body []byte) ([]byte, bool) {
	type kv struct {
		k string
		v any
	}
	var ctx []kv
	if r.Ctx != nil {
		simple := true
		r.Ctx.ForEach(func(k string, v any) any {
			switch v.(type) {
			case string, bool, nil:
				ctx = append(ctx, kv{k, v})
			default:
				simple = false
			}
			return nil
		})
		if !simple {
			return nil, false
		}
		slices.SortFunc(ctx, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	}
	dst = append(dst, `{"URL":`...)
	dst = appendJSONString(dst, r.URL.String())
	dst = append(dst, `,"Method":`...)
	dst = appendJSONString(dst, r.Method)
	dst = append(dst, `,"Depth":`...)
	dst = strconv.AppendInt(dst, int64(r.Depth), 10)
	dst = append(dst, `,"Body":`...)
	if body == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, body)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"ID":`...)
	dst = strconv.AppendUint(dst, uint64(r.ID), 10)
	dst = append(dst, `,"Ctx":`...)
	if r.Ctx == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '{')
		for i, e := range ctx {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, e.k)
			dst = append(dst, ':')
			switch v := e.v.(type) {
			case string:
				dst = appendJSONString(dst, v)
			case bool:
				dst = strconv.AppendBool(dst, v)
			default: // nil
				dst = append(dst, "null"...)
			}
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"Headers":`...)
	if r.Headers == nil || *r.Headers == nil {
		dst = append(dst, "null"...)
	} else {
		h := *r.Headers
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			vs := h[k]
			if vs == nil {
				dst = append(dst, "null"...)
				continue
			}
			dst = append(dst, '[')
			for j, v := range vs {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, v)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"Host":`...)
	dst = appendJSONString(dst, r.Host)
	dst = append(dst, '}')
	return dst, true
}

// appendJSONString appends s as encoding/json writes a string (with its
// default HTML escaping): the same escapes, \ufffd for invalid UTF-8,
// U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
