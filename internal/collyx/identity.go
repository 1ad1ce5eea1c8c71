package collyx

import (
	"net/http"
	"reflect"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// HeaderKey identifies one request's header map; the zero HeaderKey is
// none. Colly's fetch makes a Request's Headers point at the very map the
// http.Request carries (Headers: &req.Header), and Retry hands that map to
// the new request, so a transport can find what a callback recorded about
// a request by the map alone, with no marker on the wire. A HeaderKey
// keeps its map alive, so a key is never some later map's.
type HeaderKey struct{ p unsafe.Pointer }

// HeaderOf returns the key of h, zero for a nil map.
func HeaderOf(h http.Header) HeaderKey {
	if h == nil {
		return HeaderKey{}
	}
	return HeaderKey{reflect.ValueOf(h).UnsafePointer()}
}

// RequestHeader returns the key of r's header map, zero if it has none.
func RequestHeader(r *colly.Request) HeaderKey {
	if r.Headers == nil {
		return HeaderKey{}
	}
	return HeaderOf(*r.Headers)
}

// RequestAddr returns r's address. Colly hands the same *Request to
// OnRequest, OnResponse, every OnHTML element, OnScraped and OnError of
// one fetch (a redirect included), and a new one to every other fetch, a
// retry's included, so the address names one fetch for as long as r
// lives. It does not keep r alive: a caller that keys by it must tell a
// later request at the same address apart (a weak pointer does).
func RequestAddr(r *colly.Request) uintptr { return uintptr(unsafe.Pointer(r)) }

// CollectorOf returns the collector r belongs to: the one whose Visit,
// Request or UnmarshalRequest made it, whose callbacks Colly runs for it
// (a clone's requests are the clone's). Colly has no accessor for it. It
// returns nil for a request no collector made (one built by hand) and
// when this Colly version keeps it elsewhere.
func CollectorOf(r *colly.Request) *colly.Collector {
	if p := at[*colly.Collector](unsafe.Pointer(r), layout.collector); p != nil {
		return *p
	}
	return nil
}
