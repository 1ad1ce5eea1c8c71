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

// ErrorCallbacks returns a copy of c's OnError callbacks, in the order
// Colly runs them, and false when this Colly version keeps them elsewhere.
// Colly has no way to report an error for a request its OnRequest
// callbacks aborted: an extension that refuses a request there calls
// these itself, as Colly's handleOnError would.
func ErrorCallbacks(c *colly.Collector) ([]colly.ErrorCallback, bool) {
	if c == nil {
		return nil, false
	}
	v := reflect.ValueOf(c).Elem()
	f := v.FieldByName("errorCallbacks")
	if !f.IsValid() || f.Type() != reflect.TypeFor[[]colly.ErrorCallback]() {
		return nil, false
	}
	if mu := lockOf(v); mu != nil {
		mu.RLock()
		defer mu.RUnlock()
	}
	return slices.Clone(*(*[]colly.ErrorCallback)(unsafe.Pointer(f.UnsafeAddr()))), true
}

// lockOf returns the collector's callback lock, nil if it has none where
// expected.
func lockOf(v reflect.Value) *sync.RWMutex {
	f := v.FieldByName("lock")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*sync.RWMutex]() || f.IsNil() {
		return nil
	}
	return (*sync.RWMutex)(f.UnsafePointer())
}

// ReportError runs c's OnError callbacks for r with err, as Colly does for
// a request that failed: a Response with no status carrying r and its
// context. It reports false when the callbacks could not be found.
func ReportError(c *colly.Collector, r *colly.Request, err error) bool {
	fs, ok := ErrorCallbacks(c)
	if !ok {
		return false
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

// ErrNoClient says Colly's layout is not the one this package reads.
var ErrNoClient = errors.New("collyx: this Colly version's collector keeps its HTTP client where Breakwater cannot read it")

// Client returns the *http.Client c sends with. Colly has no accessor for
// it (WithTransport and SetClient only write), so it is read from the
// collector's backend; a clone shares it.
func Client(c *colly.Collector) (*http.Client, error) {
	if c == nil {
		return nil, fmt.Errorf("collyx: nil collector")
	}
	be := reflect.ValueOf(c).Elem().FieldByName("backend")
	if !be.IsValid() || be.Kind() != reflect.Pointer || be.IsNil() || be.Elem().Kind() != reflect.Struct {
		return nil, ErrNoClient
	}
	f := be.Elem().FieldByName("Client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*http.Client]() || f.IsNil() {
		return nil, ErrNoClient
	}
	return (*http.Client)(f.UnsafePointer()), nil
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

// Where a collector keeps its LimitRules and a rule its slots, found once.
var limitLayout = func() (l struct {
	backend, rules, lock, slots uintptr
	ok                          bool
}) {
	be, ok := reflect.TypeFor[colly.Collector]().FieldByName("backend")
	if !ok || be.Type.Kind() != reflect.Pointer || be.Type.Elem().Kind() != reflect.Struct {
		return l
	}
	rules, ok1 := be.Type.Elem().FieldByName("LimitRules")
	lock, ok2 := be.Type.Elem().FieldByName("lock")
	slots, ok3 := reflect.TypeFor[colly.LimitRule]().FieldByName("waitChan")
	if !ok1 || !ok2 || !ok3 || rules.Type != reflect.TypeFor[[]*colly.LimitRule]() ||
		lock.Type != reflect.TypeFor[*sync.RWMutex]() || slots.Type != reflect.TypeFor[chan bool]() {
		return l
	}
	l.backend, l.rules, l.lock, l.slots, l.ok = be.Offset, rules.Offset, lock.Offset, slots.Offset, true
	return l
}()

// LimitSlots returns the slots of the LimitRule of c's that matches host
// (a URL's Host, as Colly matches it): Colly's httpBackend.Do puts a value
// in the channel before a request leaves, waiting while it is full (its
// capacity is the rule's Parallelism), and takes one out once the answer
// is read. A request waiting for something other than its own site can
// take one out meanwhile, to let another request use the slot, if it puts
// one back before its transport returns. It returns nil when no rule
// matches or this Colly version keeps its rules elsewhere.
func LimitSlots(c *colly.Collector, host string) chan bool {
	if c == nil || !limitLayout.ok {
		return nil
	}
	be := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(c), limitLayout.backend))
	if be == nil {
		return nil
	}
	if mu := *(**sync.RWMutex)(unsafe.Add(be, limitLayout.lock)); mu != nil {
		mu.RLock()
		defer mu.RUnlock()
	}
	for _, r := range *(*[]*colly.LimitRule)(unsafe.Add(be, limitLayout.rules)) {
		if r.Match(host) {
			return *(*chan bool)(unsafe.Add(unsafe.Pointer(r), limitLayout.slots))
		}
	}
	return nil
}
