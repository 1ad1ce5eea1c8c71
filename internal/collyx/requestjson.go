package collyx

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gocolly/colly/v2"
)

// SerialRequest is the JSON form of a request that Colly's
// (*Request).Marshal writes and (*Collector).UnmarshalRequest reads
// (request.go's serializableRequest), field for field.
type SerialRequest struct {
	URL     string
	Method  string
	Depth   int
	Body    []byte
	ID      uint32
	Ctx     map[string]any
	Headers http.Header
	Host    string
}

// MarshalRequest writes r with body as UnmarshalRequest reads it, itself
// rather than through r.Marshal: Marshal reads the body to its end (a
// POST sent after that goes out empty) and fails on a Ctx value JSON
// cannot hold. Ctx values that JSON cannot hold are left out and named in
// dropped; the rest come back as JSON gives them (numbers as float64,
// times as strings). u is r.URL.String(), which the caller has. err is
// always nil.
//
// Its bytes are encoding/json's for r's SerialRequest, written without
// reflection: json.Marshal cost a request several microseconds, much of
// it growing the stack of the goroutine Colly had just started for the
// request. Only a Ctx value other than a string, a bool or nil goes
// through encoding/json.
func MarshalRequest(r *colly.Request, u string, body []byte) (b []byte, dropped []string, err error) {
	type kv struct {
		k string
		v any
	}
	var ctx []kv
	if r.Ctx != nil {
		r.Ctx.ForEach(func(k string, v any) any {
			ctx = append(ctx, kv{k, v})
			return nil
		})
		slices.SortFunc(ctx, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	}
	dst := make([]byte, 0, marshalledSize(r, u, body))
	dst = append(dst, `{"URL":`...)
	dst = appendJSONString(dst, u)
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
		for _, e := range ctx {
			var raw []byte // a value only encoding/json writes
			switch e.v.(type) {
			case string, bool, nil:
			default:
				if raw, err = json.Marshal(e.v); err != nil {
					dropped = append(dropped, e.k)
					continue
				}
			}
			if dst[len(dst)-1] != '{' {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, e.k)
			dst = append(dst, ':')
			switch v := e.v.(type) {
			case string:
				dst = appendJSONString(dst, v)
			case bool:
				dst = strconv.AppendBool(dst, v)
			case nil:
				dst = append(dst, "null"...)
			default:
				dst = append(dst, raw...)
			}
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"Headers":`...)
	if r.Headers == nil || *r.Headers == nil {
		dst = append(dst, "null"...)
	} else {
		h := *r.Headers
		var few [8]string // a request's headers, mostly: no allocation
		keys := few[:0]
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
	return append(dst, '}'), dropped, nil
}

// ParseRequest reads a marshalled request's URL, as Colly will request it,
// and its ID. It takes the steps Colly's queue takes with an entry
// (UnmarshalRequest, scrape's ParseURL, http.NewRequest) and fails where
// any of them fails, so a queue never takes an entry Colly would drop.
// Its errors read "a queued request …", for the caller to prefix.
func ParseRequest(b []byte) (u string, id uint64, err error) {
	var sr SerialRequest
	if err := json.Unmarshal(b, &sr); err != nil {
		return "", 0, fmt.Errorf("a queued request is not JSON colly can load: %w", err)
	}
	if sr.URL == "" {
		return "", 0, errors.New("a queued request has no URL")
	}
	loaded, err := url.Parse(sr.URL)
	if err != nil {
		return "", 0, fmt.Errorf("a queued request's URL %q: %w", sr.URL, err)
	}
	pu, err := ParseURL(loaded.String())
	if err != nil {
		return "", 0, fmt.Errorf("a queued request's URL %q: %w", sr.URL, err)
	}
	u = pu.String()
	if _, err := http.NewRequest(sr.Method, u, nil); err != nil {
		return "", 0, fmt.Errorf("a queued request colly cannot send: %w", err)
	}
	return u, RequestID(u, sr.Body), nil
}

// marshalledSize is about the size of r marshalled, with room for the
// checkpoint's tail (its collector's name), so that the buffer is made
// once and not much larger than what it holds: a guess for the headers
// and the Ctx (walking them cost more than the bytes it saves; the buffer
// grows when the guess is short).
func marshalledSize(r *colly.Request, u string, body []byte) int {
	n := 128 + len(u) + len(r.Method) + len(r.Host) + (len(body)+2)/3*4
	if r.Headers != nil {
		n += 48 * len(*r.Headers)
	}
	return n
}

// jsonSafe says which ASCII bytes encoding/json writes as they are (HTML
// escaping on): one load a byte instead of six comparisons.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		safe[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return safe
}()

// appendJSONString appends s as encoding/json writes a string (with its
// default HTML escaping): the same escapes, \ufffd for invalid UTF-8,
// U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
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
