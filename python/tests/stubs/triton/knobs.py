"""The stub's knobs: runtime.kernel_load_end_hook is a hook chain, and
load_module(...) calls it the way Triton's CompiledKernel._init_handles does
after loading a kernel's binary: positionally, (module, function, name,
metadata_group, hash), module being the driver's module handle as an int."""


class HookChain:
    """Hooks called in turn; the same hook is added once."""

    def __init__(self, reversed=False):
        self.calls = []
        self.reversed = reversed

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in (reversed(self.calls) if self.reversed else list(self.calls)):
            call(*args, **kwargs)


class runtime_knobs:
    kernel_load_start_hook = HookChain()
    kernel_load_end_hook = HookChain(reversed=True)


runtime = runtime_knobs()


def load_module(module, name="add_kernel", function=1, metadata_group=None, hash="0" * 64):
    """What Triton does once the binary is loaded: the end hook, positionally."""
    runtime.kernel_load_end_hook(module, function, name, metadata_group or {}, hash)
