package gcu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// container is what a container needs to use Enflame GCUs (CDI specs):
// the control node /dev/gcuctl beside the /dev/gcu<N> nodes (gcushare's
// "driverDevice" and "mainDevice": see presence.go) and EFML. Which node
// is which TOPS device, and whether TOPS_VISIBLE_DEVICES takes UUIDs, are
// not confirmed: a spec carries only the "all" device.
var container = driver.Container{
	Control:   deviceNodes.Control,
	Libraries: []clib.Library{EFMLLibrary},
}
