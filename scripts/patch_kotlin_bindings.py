"""Four exact edits to uniffi 0.32's generated Kotlin (royaltykit_kotlin.kt), so that a JVM that
only builds a WebhookVerifier and verifies never starts JNA (bench/PROFILES.md, cold start):

1. the objects' Cleaner moves out of `UniffiLib`, whose initialisation registers every native
   function through JNA, into an object of its own;
2. WebhookVerifier's constructor asks `NativeFast.newWebhookVerifier` (JNI) first and falls back
   to the generated JNA call (Android, `-Droyaltykit.jni=false`, no cached library);
3. WebhookVerifier gains `callWithBorrowedHandle`: uniffi's `callWithHandle` without the clone
   call through JNA, for the JNI functions that borrow the handle while the call count holds it;
4. WebhookVerifier's cleaner frees through `NativeFast.freeVerifier` when JNI is in use.

Each edit must match exactly once, else the build stops: a uniffi upgrade that changes the
generated text is then seen, never silently left unpatched.
"""
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()


def once(old, new, where=None):
    global text
    scope = text if where is None else text[where[0]:where[1]]
    if scope.count(old) != 1:
        sys.exit(f"patch_kotlin_bindings: expected one {old.splitlines()[0]!r} in {path}, found {scope.count(old)}")
    if where is None:
        text = text.replace(old, new)
    else:
        text = text[:where[0]] + scope.replace(old, new) + text[where[1]:]


# 1. The Cleaner without JNA's registration.
cleaner = """    // The Cleaner for the whole library
    internal val CLEANER: UniffiCleaner by lazy {
        UniffiCleaner.create()
    }
"""
once(cleaner, "")
uses = text.count("UniffiLib.CLEANER.register(")
if uses == 0:
    sys.exit(f"patch_kotlin_bindings: no UniffiLib.CLEANER uses in {path}")
text = text.replace("UniffiLib.CLEANER.register(", "UniffiObjectCleaner.CLEANER.register(")
once("internal object UniffiLib {\n", """// The Cleaner for the whole library, apart from UniffiLib (whose initialisation starts JNA).
internal object UniffiObjectCleaner {
    internal val CLEANER: UniffiCleaner by lazy {
        UniffiCleaner.create()
    }
}

internal object UniffiLib {
""")

# The WebhookVerifier class, up to its converter (the next declaration generated).
start = text.find("\nopen class WebhookVerifier: ")
end = text.find("\npublic object FfiConverterTypeWebhookVerifier:", start)
if start < 0 or end < 0:
    sys.exit(f"patch_kotlin_bindings: no WebhookVerifier class in {path}")

# 2. The constructor through JNI first.
once("""        this(UniffiWithHandle, 
    uniffiRustCallWithError(RoyaltyKitExceptionExternalErrorHandler) { _status ->
    UniffiLib.uniffi_royaltykit_kotlin_fn_constructor_webhookverifier_new(""",
     """        this(UniffiWithHandle, 
    NativeFast.newWebhookVerifier(`secrets`, `toleranceSeconds`, `maxBodyBytes`, `validUntil`) ?:
    uniffiRustCallWithError(RoyaltyKitExceptionExternalErrorHandler) { _status ->
    UniffiLib.uniffi_royaltykit_kotlin_fn_constructor_webhookverifier_new(""", (start, end))
end = text.find("\npublic object FfiConverterTypeWebhookVerifier:", start)

# 4. Its cleaner's action through JNI too, when JNI is in use (closing starts no JNA either).
once("""            uniffiRustCall { status ->
                UniffiLib.uniffi_royaltykit_kotlin_fn_free_webhookverifier(handle, status)
            }""", """            if (NativeFast.available) {
                NativeFast.freeVerifier(handle)
                return
            }
            uniffiRustCall { status ->
                UniffiLib.uniffi_royaltykit_kotlin_fn_free_webhookverifier(handle, status)
            }""", (start, end))
end = text.find("\npublic object FfiConverterTypeWebhookVerifier:", start)

# 3. The borrowed-handle call.
once("    internal inline fun <R> callWithHandle(block: (handle: Long) -> R): R {\n",
     """    /**
     * As [callWithHandle], passing the handle itself instead of a clone: for JNI functions that
     * borrow it (the call count keeps the object alive until they return).
     */
    internal inline fun <R> callWithBorrowedHandle(block: (handle: Long) -> R): R {
        do {
            val c = this.callCounter.get()
            if (c == 0L) {
                throw IllegalStateException("${this.javaClass.simpleName} object has already been destroyed")
            }
            if (c == Long.MAX_VALUE) {
                throw IllegalStateException("${this.javaClass.simpleName} call counter would overflow")
            }
        } while (! this.callCounter.compareAndSet(c, c + 1L))
        try {
            return block(this.handle)
        } finally {
            if (this.callCounter.decrementAndGet() == 0L) {
                cleanable?.clean()
            }
        }
    }

    internal inline fun <R> callWithHandle(block: (handle: Long) -> R): R {
""", (start, end))

open(path, "w", encoding="utf-8").write(text)
