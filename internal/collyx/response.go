package collyx

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/gocolly/colly/v2"
)

// IsHTML reports whether Colly runs its OnHTML callbacks for r
// (handleOnHTML's test): the media type of its Content-Type, or of what
// http.DetectContentType makes of its body when it has none, is text/html
// or application/xhtml+xml.
func IsHTML(r *colly.Response) bool {
	var ct string
	if r.Headers != nil {
		ct = r.Headers.Get("Content-Type")
	}
	if ct == "" {
		ct = http.DetectContentType(r.Body)
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// IsZero reports whether v is its type's zero value: "not given", for an
// option of a type Go cannot compare (a zerolog.Logger holds slices). It
// has nothing of Colly's; it is here because this package is the one
// place Breakwater uses reflect.
func IsZero[T any](v T) bool { return reflect.ValueOf(&v).Elem().IsZero() }

// IsFetchError reports whether err is what a synchronous collector's Visit
// (or Retry) returns for a request that was made: the status text Colly
// turns a non-2xx answer into (handleOnError), or a failure of the
// client's round trip. Its callbacks saw it; it is no refusal of Colly's.
func IsFetchError(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	s := err.Error()
	for code := 203; code < 600; code++ {
		if t := http.StatusText(code); t != "" && t == s {
			return true
		}
	}
	return false
}
