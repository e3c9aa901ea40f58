package report

import "github.com/flagos-ai/flagshim"

// Selection is the JSON form of a flagshim.Selection: what `flagshim select
// --json` prints, the C library's flagshim_select_json writes and Python's
// flagshim.select_env() reads (docs/visible-devices.md documents each key).
// "schema_version" is first; keys are only ever added.
type Selection struct {
	SchemaVersion int               `json:"schema_version"`
	Type          string            `json:"type"`     // the vendor type the devices belong to
	Runtime       string            `json:"runtime"`  // whose rules wrote the variables: "CUDA"
	Env           map[string]string `json:"env"`      // the variables, names to values
	Settings      []Setting         `json:"settings"` // the same, in the order to set them
	Devices       []Selected        `json:"devices"`  // what each device given named, in the child's order
	Source        string            `json:"source"`   // the management library (or nodes) the devices were read from
	Notes         []string          `json:"notes"`
}

// Setting is one variable of a Selection.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Selected is one device of a Selection.
type Selected struct {
	Spec        string `json:"spec"`  // as given
	Index       int    `json:"index"` // the index the child gives it
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	PCIBusID    string `json:"pci_bus_id"`
	SourceIndex int    `json:"source_index"` // the management library's own index
}

// SelectionOf is sel's JSON form.
func SelectionOf(sel *flagshim.Selection) Selection {
	o := Selection{SchemaVersion: SchemaVersion, Type: string(sel.Type), Runtime: sel.Runtime,
		Env: map[string]string{}, Settings: []Setting{}, Devices: []Selected{}, Source: sel.Source, Notes: nonNil(sel.Notes)}
	for _, kv := range sel.Settings {
		o.Env[kv.Name] = kv.Value
		o.Settings = append(o.Settings, Setting{kv.Name, kv.Value})
	}
	for i, d := range sel.Devices {
		o.Devices = append(o.Devices, Selected{Spec: d.Spec, Index: i, Name: d.Name, UUID: d.UUID, PCIBusID: d.PCIBusID, SourceIndex: d.SourceIndex})
	}
	return o
}
