// Package collyx is the one place Breakwater depends on Colly's internals:
// it reads what Colly keeps unexported and an extension needs (the
// collector's OnRequest and OnError callbacks, its HTTP client and its
// LimitRules' slots, a request's collector), and it holds the one copy of each
// behaviour of Colly's that
// Breakwater must match (the URL scrape sends, the ID requestCheck hashes,
// the request JSON, the cache's file names, when OnHTML runs, a request's
// header map and address as its identity). Every accessor reports whether
// this Colly version has the field where it is expected, and the package's
// tests pin the version and check each function against it, so a Colly
// upgrade that moves or changes any of it fails the tests instead of a
// crawl. It is also the one place Breakwater uses reflect or unsafe.
package collyx

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	"github.com/gocolly/colly/v2"
)

// layout is where Colly keeps what this package reads, found once. A
// field's ok is false when this Colly version keeps it elsewhere or as
// another type.
var layout = func() (l struct {
	errorCallbacks, requestCallbacks, lock, backend field // the collector's
	rules, backendLock, client                      field // its backend's
	slots                                           field // a LimitRule's
	collector                                       field // a Request's
}) {
	c := reflect.TypeFor[colly.Collector]()
	l.errorCallbacks = fieldOf[[]colly.ErrorCallback](c, "errorCallbacks")
	l.requestCallbacks = fieldOf[[]colly.RequestCallback](c, "requestCallbacks")
	l.lock = fieldOf[*sync.RWMutex](c, "lock")
	if be, ok := c.FieldByName("backend"); ok && be.Type.Kind() == reflect.Pointer && be.Type.Elem().Kind() == reflect.Struct {
		l.backend = field{be.Offset, true}
		l.rules = fieldOf[[]*colly.LimitRule](be.Type.Elem(), "LimitRules")
		l.backendLock = fieldOf[*sync.RWMutex](be.Type.Elem(), "lock")
		l.client = fieldOf[*http.Client](be.Type.Elem(), "Client")
	}
	l.slots = fieldOf[chan bool](reflect.TypeFor[colly.LimitRule](), "waitChan")
	l.collector = fieldOf[*colly.Collector](reflect.TypeFor[colly.Request](), "collector")
	return l
}()

// field is where a struct keeps one of its fields.
type field struct {
	off uintptr
	ok  bool
}

// fieldOf finds t's field name, if it is a T.
func fieldOf[T any](t reflect.Type, name string) field {
	f, ok := t.FieldByName(name)
	return field{f.Offset, ok && f.Type == reflect.TypeFor[T]()}
}

// at returns the T at f in the struct p points to, nil for a nil p or a
// field this Colly version keeps elsewhere.
func at[T any](p unsafe.Pointer, f field) *T {
	if p == nil || !f.ok {
		return nil
	}
	return (*T)(unsafe.Add(p, f.off))
}

// lockOf returns the lock at f in the struct p points to, nil for none.
func lockOf(p unsafe.Pointer, f field) *sync.RWMutex {
	if mu := at[*sync.RWMutex](p, f); mu != nil {
		return *mu
	}
	return nil
}

// ReportError runs c's OnError callbacks for r with err, as Colly does for
// a request that failed: a Response with no status carrying r and its
// context. Colly has no way to report an error for a request its
// OnRequest callbacks aborted: an extension that refuses a request there
// calls this, as Colly's handleOnError would. It reports false when this
// Colly version keeps the callbacks elsewhere.
func ReportError(c *colly.Collector, r *colly.Request, err error) bool {
	cbs := at[[]colly.ErrorCallback](unsafe.Pointer(c), layout.errorCallbacks)
	if cbs == nil {
		return false
	}
	mu := lockOf(unsafe.Pointer(c), layout.lock)
	if mu != nil {
		mu.RLock()
	}
	fs := slices.Clone(*cbs) // run unlocked: a callback may register another
	if mu != nil {
		mu.RUnlock()
	}
	resp := &colly.Response{Request: r, Ctx: r.Ctx}
	for _, f := range fs {
		f(resp, err)
	}
	return true
}

// CacheFile is the file Colly's CacheDir keeps the answer to a GET of
// rawURL in (httpBackend.Cache: the hex SHA-1 of the URL, under a folder
// named for its first two digits). Colly caches every answer under 500,
// a 429 included, and answers the next GET of the URL from it.
func CacheFile(cacheDir, rawURL string) string {
	sum := sha1.Sum([]byte(rawURL))
	h := hex.EncodeToString(sum[:])
	return path.Join(cacheDir, h[:2], h)
}

// ForgetCached removes what Colly's cache holds for rawURL, so that its
// next GET reaches the site. Nothing cached is not an error.
func ForgetCached(cacheDir, rawURL string) error {
	if cacheDir == "" {
		return nil
	}
	err := os.Remove(CacheFile(cacheDir, rawURL))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Client returns the *http.Client c sends with. Colly has no accessor for
// it (WithTransport and SetClient only write), so it is read from the
// collector's backend; a clone shares it.
func Client(c *colly.Collector) (*http.Client, error) {
	if c == nil {
		return nil, fmt.Errorf("collyx: nil collector")
	}
	if be := at[unsafe.Pointer](unsafe.Pointer(c), layout.backend); be != nil {
		if cl := at[*http.Client](*be, layout.client); cl != nil && *cl != nil {
			return *cl, nil
		}
	}
	return nil, errors.New("collyx: this Colly version's collector keeps its HTTP client where Breakwater cannot read it")
}

// ReadBody returns the bytes of body, a request body as Colly's Retry
// replays it (an io.ReadSeeker, which Retry seeks to its start; nil is no
// body), and leaves it at its start. ok is false for a body Retry refuses
// (ErrRetryBodyUnseekable), which is left as it is.
func ReadBody(body io.Reader) (b []byte, ok bool, err error) {
	if body == nil {
		return nil, true, nil
	}
	s, ok := body.(io.ReadSeeker)
	if !ok {
		return nil, false, nil
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return nil, true, err
	}
	b, err = io.ReadAll(s)
	if _, serr := s.Seek(0, io.SeekStart); err == nil {
		err = serr
	}
	return b, true, err
}

// LimitSlots returns the slots of the LimitRule of c's that matches host
// (a URL's Host, as Colly matches it): Colly's httpBackend.Do puts a value
// in the channel before a request leaves, waiting while it is full (its
// capacity is the rule's Parallelism), and takes one out once the answer
// is read. A request waiting for something other than its own site can
// take one out meanwhile, to let another request use the slot, if it puts
// one back before its transport returns. It returns nil when no rule
// matches or this Colly version keeps its rules elsewhere.
func LimitSlots(c *colly.Collector, host string) chan bool {
	be := at[unsafe.Pointer](unsafe.Pointer(c), layout.backend)
	if be == nil || *be == nil || !layout.rules.ok || !layout.backendLock.ok || !layout.slots.ok {
		return nil
	}
	if mu := lockOf(*be, layout.backendLock); mu != nil {
		mu.RLock()
		defer mu.RUnlock()
	}
	for _, r := range *at[[]*colly.LimitRule](*be, layout.rules) {
		if r.Match(host) {
			return *at[chan bool](unsafe.Pointer(r), layout.slots)
		}
	}
	return nil
}
