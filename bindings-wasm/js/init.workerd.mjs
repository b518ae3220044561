// Workers may not compile wasm from bytes at run time: the module is imported (wrangler and
// workerd load `.wasm` imports as compiled modules) and instantiated before the API module runs.
import wasm from './royaltykit_wasm_bg.wasm';
import glue from './royaltykit_wasm.cjs';

glue.initSync({ module: wasm });
