package testserver

import "errors"

// Fleet is several stores started together, each on its own port and so its
// own host: the shape of a crawl over many domains where one degrades.
type Fleet struct {
	Stores []*Store // in the order of the configs given to StartFleet
}

// StartFleet starts one store per config. If any fails to start, the ones
// already started are closed and the error is returned.
func StartFleet(cfgs []Config) (*Fleet, error) {
	f := &Fleet{Stores: make([]*Store, 0, len(cfgs))}
	for _, cfg := range cfgs {
		s, err := Start(cfg)
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		f.Stores = append(f.Stores, s)
	}
	return f, nil
}

// URLs returns each store's base URL, in order.
func (f *Fleet) URLs() []string {
	out := make([]string, len(f.Stores))
	for i, s := range f.Stores {
		out[i] = s.URL()
	}
	return out
}

// Count returns the number of requests all stores received.
func (f *Fleet) Count() int {
	n := 0
	for _, s := range f.Stores {
		n += s.Count()
	}
	return n
}

// Close closes every store and returns their errors joined.
func (f *Fleet) Close() error {
	errs := make([]error, 0, len(f.Stores))
	for _, s := range f.Stores {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
