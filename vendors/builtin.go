package vendors

import (
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/gcu"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/drivers/kunlunxin"
	"github.com/flagos-ai/flagshim/drivers/maca"
	"github.com/flagos-ai/flagshim/drivers/mlu"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/drivers/npu"
)

// builtin are flagshim's own vendors, one line each, in the order Init
// registers their backends. Adding a vendor adds its line here (the
// checklist is in docs/architecture.md).
var builtin = []func() *driver.Vendor{
	cuda.Vendor,
	musa.Vendor,
	hip.Vendor,
	mlu.Vendor,
	npu.Vendor,
	maca.Vendor,
	gcu.Vendor,
	kunlunxin.Vendor,
}

func init() {
	for _, v := range builtin {
		if err := Register(v()); err != nil {
			panic(err) // a built-in description that fails Validate: a bug
		}
	}
}
