package flagos

import "github.com/flagos-ai/flagshim/device"

// Record is the routed vendor device's record, as that backend gives it:
// its Type and Device name the vendor backend that serves it (musa:1),
// which flagos:1 names too. A routed backend without records gives an
// error matching device.ErrNotSupported.
func (b *Backend) Record(index int) (device.Record, error) {
	r, err := b.check(index)
	if err != nil {
		return device.Record{}, err
	}
	id, err := device.IdentifierOf(r.to)
	if err != nil {
		return device.Record{}, r.wrap("record", index, err)
	}
	rec, err := id.Record(index)
	if err != nil {
		return device.Record{}, r.wrap("record", index, err)
	}
	return rec, nil
}

// Unusable is empty: the vendor backends report the devices they cannot
// use, each once.
func (b *Backend) Unusable() []device.Record { return nil }

var _ device.Identifier = (*Backend)(nil)
