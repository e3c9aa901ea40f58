package musa

import (
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/presence"
)

// Presence is MUSA's presence tier, for driver.WithFacts: the Moore Threads
// management library's view (libmtml.so; MUSA_VISIBLE_DEVICES applied),
// else the /dev/mtgpu.* nodes, and what libmusa says without muInit.
func Presence(opts ...presence.Option) func(*driver.Backend) driver.Facts {
	return func(b *driver.Backend) driver.Facts {
		return presence.Facts(b, Vendor.Name, presence.MTML(opts...), presence.Nodes(presence.MooreThreads, opts...))
	}
}
