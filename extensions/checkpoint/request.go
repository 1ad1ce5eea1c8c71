package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/breakwater-crawl/breakwater/internal/requestid"
	"github.com/gocolly/colly/v2"
	whatwgUrl "github.com/nlnwa/whatwg-url/url"
)

// urlParser parses URLs exactly as Colly v2.3.0 does (colly.go's
// urlParser), so that a loaded request's URL is the one Colly will hash.
var urlParser = whatwgUrl.NewParser(whatwgUrl.WithPercentEncodeSinglePercentSign())

// serialRequest is the JSON form of a request that colly's
// (*Request).Marshal writes and (*Collector).UnmarshalRequest reads. The
// checkpoint writes it itself: Marshal reads the body to its end (a POST
// sent after that goes out empty) and fails on a Ctx value JSON cannot
// hold.
type serialRequest struct {
	URL     string
	Method  string
	Depth   int
	Body    []byte
	ID      uint32
	Ctx     map[string]any
	Headers http.Header
	Host    string
}

// errBodyNotReplayable reports a request whose body cannot be read
// twice: it cannot be both sent and kept for a resume.
var errBodyNotReplayable = errors.New("checkpoint: the request body is not an io.ReadSeeker; it cannot be kept for a resume")

// readBody returns the request body's bytes and leaves the reader at its
// start, ready to be sent. A nil body gives nil.
func readBody(r *colly.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	s, ok := r.Body.(io.ReadSeeker)
	if !ok {
		return nil, errBodyNotReplayable
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(s)
	if _, serr := s.Seek(0, io.SeekStart); err == nil {
		err = serr
	}
	if len(b) == 0 {
		b = nil
	}
	return b, err
}

// marshalRequest writes r as UnmarshalRequest reads it. Ctx values that
// JSON cannot hold are left out and named in dropped; the rest come back
// as JSON gives them (numbers as float64, times as strings).
func marshalRequest(r *colly.Request, body []byte) (b []byte, dropped []string, err error) {
	if b, ok := appendRequest(make([]byte, 0, 512), r, body); ok {
		return b, nil, nil
	}
	sr := serialRequest{URL: r.URL.String(), Method: r.Method, Depth: r.Depth, Body: body, ID: r.ID, Host: r.Host}
	if r.Headers != nil {
		sr.Headers = *r.Headers
	}
	if r.Ctx != nil {
		sr.Ctx = map[string]any{}
		r.Ctx.ForEach(func(k string, v any) any {
			if _, err := json.Marshal(v); err != nil {
				dropped = append(dropped, k)
			} else {
				sr.Ctx[k] = v
			}
			return nil
		})
	}
	b, err = json.Marshal(sr)
	return b, dropped, err
}

// parseRequest reads the fields of a marshalled request the checkpoint
// needs: its URL, as Colly will request it, and its ID. It takes the
// steps Colly's queue takes with an entry, in the same order, and fails
// where any of them fails, so that the queue never takes an entry Colly
// would drop (it would stay pending for ever) and the ID is the one Colly
// will hand to Storage.Visited:
//
//   - UnmarshalRequest: json.Unmarshal (one JSON object and nothing after
//     it but white space), then net/url's parse of the URL (which refuses
//     a leading space or a control character);
//   - scrape: the WHATWG parse of that URL's String, then net/url's parse
//     of the result;
//   - http.NewRequest with the request's method (which refuses a method
//     that is not an HTTP token) and that URL.
func parseRequest(b []byte) (u string, id uint64, err error) {
	var sr serialRequest
	if err := json.Unmarshal(b, &sr); err != nil {
		return "", 0, fmt.Errorf("checkpoint: a queued request is not JSON colly can load: %w", err)
	}
	if sr.URL == "" {
		return "", 0, errors.New("checkpoint: a queued request has no URL")
	}
	loaded, err := url.Parse(sr.URL)
	if err != nil {
		return "", 0, fmt.Errorf("checkpoint: a queued request's URL %q: %w", sr.URL, err)
	}
	p, err := urlParser.Parse(loaded.String())
	if err != nil {
		return "", 0, fmt.Errorf("checkpoint: a queued request's URL %q: %w", sr.URL, err)
	}
	pu, err := url.Parse(p.Href(false))
	if err != nil {
		return "", 0, fmt.Errorf("checkpoint: a queued request's URL %q: %w", sr.URL, err)
	}
	u = pu.String()
	if _, err := http.NewRequest(sr.Method, u, nil); err != nil {
		return "", 0, fmt.Errorf("checkpoint: a queued request colly cannot send: %w", err)
	}
	return u, requestid.Of(u, sr.Body), nil
}
