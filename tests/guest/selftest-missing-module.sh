# what: harness self-test: a module the kernel does not ship fails before boot, with its name
#@ modules no_such_module
true
