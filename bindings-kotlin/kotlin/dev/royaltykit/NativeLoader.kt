// How the JVM finds the native library: once per machine, not once per process.
package dev.royaltykit

import com.sun.jna.Platform
import dev.royaltykit.types.FfiConverterTypeRoyaltyKitError
import dev.royaltykit.types.RoyaltyKitException
import java.io.File
import java.io.IOException
import java.lang.ref.Reference
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

/**
 * Loads the jar's native library from a per-user cache instead of letting JNA extract a fresh
 * temporary copy in every process (the largest part of a JVM's cold start), and loads the same
 * file for the JNI hot path ([NativeFast]).
 *
 * The generated bindings call [prepare] before JNA opens the library (build-jar.sh adds the call
 * to uniffi's `findLibraryName`). It extracts `<os-arch>/<library>` from the jar into
 * `<cache>/<sha256>/<library>` the first time (written aside, checked against the digest the
 * build recorded, then renamed into place, so concurrent processes never see half a file), and
 * points uniffi's `libraryOverride` properties at it. `<cache>` is the `royaltykit.native.dir`
 * system property, else `$XDG_CACHE_HOME/royaltykit`, else `~/.cache/royaltykit`
 * (`%LOCALAPPDATA%\royaltykit` on Windows).
 *
 * Nothing changes when the user set `uniffi.component.royaltykit_kotlin.libraryOverride`, on
 * Android (the library comes from the APK, loaded by JNA) or when the cache cannot be written:
 * JNA then loads the library as it always did, and verification stays on the JNA path.
 */
internal object NativeLoader {
    private const val LIBRARY = "royaltykit_kotlin"
    private val COMPONENTS = arrayOf("royaltykit_kotlin", "royaltykit")

    /** The library file this process loaded for JNI, or null (JNA's own loading only). */
    val jniPath: String? = load()

    /** Called by the generated bindings before JNA opens the library; idempotent. */
    fun prepare() {
        jniPath
    }

    private fun load(): String? {
        if (System.getProperty("java.vm.name") == "Dalvik" || System.getProperty("royaltykit.jni") == "false") return null
        val override = System.getProperty("uniffi.component.$LIBRARY.libraryOverride")
        val path = when {
            override == null -> cached() ?: return null
            File(override).isAbsolute && File(override).isFile -> override
            else -> return null
        }
        try {
            System.load(path)
        } catch (e: UnsatisfiedLinkError) {
            // e.g. a cache on a noexec mount, or the library already bound to another class
            // loader: JNA loads it its own way, as if there were no cache.
            return null
        } catch (e: SecurityException) {
            return null
        }
        // Only a file that did load is handed to JNA.
        for (component in COMPONENTS) {
            val key = "uniffi.component.$component.libraryOverride"
            if (System.getProperty(key) == null) System.setProperty(key, path)
        }
        return path
    }

    /** The cached library, extracted now if it is not there yet; null when that cannot be done. */
    private fun cached(): String? {
        val name = System.mapLibraryName(LIBRARY)
        val resource = "${Platform.RESOURCE_PREFIX}/$name"
        val loader = NativeLoader::class.java.classLoader ?: return null
        // "<sha256 hex> <size>", written by build-jar.sh beside the library.
        val record = loader.getResourceAsStream("$resource.sha256")?.use { String(it.readAllBytes(), StandardCharsets.US_ASCII) }
            ?: return null
        val digest = recordDigest(record) ?: return null
        val expectedSize = recordSize(record) ?: return null
        val dir = File(cacheRoot() ?: return null, digest)
        val file = File(dir, name)
        if (file.isFile && file.length() == expectedSize) return file.absolutePath
        return try {
            Files.createDirectories(dir.toPath())
            val tmp = Files.createTempFile(dir.toPath(), ".$name", ".part")
            try {
                val sha = MessageDigest.getInstance("SHA-256")
                val input = loader.getResourceAsStream(resource) ?: return null
                input.use { inp ->
                    Files.newOutputStream(tmp).use { out ->
                        val buffer = ByteArray(64 * 1024)
                        while (true) {
                            val n = inp.read(buffer)
                            if (n < 0) break
                            sha.update(buffer, 0, n)
                            out.write(buffer, 0, n)
                        }
                    }
                }
                val got = sha.digest().joinToString("") { "%02x".format(it) }
                if (got != digest) return null
                Files.move(tmp, file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
                file.absolutePath
            } finally {
                Files.deleteIfExists(tmp)
            }
        } catch (e: IOException) {
            null
        } catch (e: SecurityException) {
            null
        }
    }

    // The record's two fields, read by hand: this runs in every JVM's first WebhookVerifier, and
    // a regular expression (java.util.regex spins method handles; kotlin.text loads its facade
    // classes) costs a cold JVM milliseconds.

    /** The record's 64 lower-case hex digits, or null when the record is malformed. */
    internal fun recordDigest(record: String): String? {
        if (record.length < 66 || record[64] != ' ') return null
        for (i in 0 until 64) if (record[i] !in '0'..'9' && record[i] !in 'a'..'f') return null
        return record.substring(0, 64)
    }

    /** The record's size (1 to 18 decimal digits after the digest and a space, then only white space), or null. */
    internal fun recordSize(record: String): Long? {
        if (recordDigest(record) == null) return null
        var end = record.length
        while (end > 65 && (record[end - 1] == ' ' || record[end - 1] == '\n' || record[end - 1] == '\r' || record[end - 1] == '\t')) end--
        if (end - 65 !in 1..18) return null
        for (i in 65 until end) if (record[i] !in '0'..'9') return null
        return java.lang.Long.parseLong(record, 65, end, 10)
    }

    private fun cacheRoot(): File? {
        System.getProperty("royaltykit.native.dir")?.let { return File(it) }
        val base = System.getenv("XDG_CACHE_HOME")?.takeIf { it.isNotEmpty() }
            ?: System.getenv("LOCALAPPDATA")?.takeIf { Platform.isWindows() && it.isNotEmpty() }
            ?: System.getProperty("user.home")?.takeIf { it.isNotEmpty() }?.let { File(it, ".cache").path }
            ?: return null
        return File(base, "royaltykit")
    }
}

/** The JNI entry points, in the same native library as the uniffi ones (src/jni.rs). */
internal object NativeFast {
    /** True when [NativeLoader] loaded the library for JNI in this process. */
    val available: Boolean = NativeLoader.jniPath != null

    /**
     * `[0] + VerifiedWebhook` or `[1] + RoyaltyKitException` (uniffi's serialisation), or null.
     * [handle] is borrowed: call it inside `WebhookVerifier.callWithBorrowedHandle`.
     */
    @JvmStatic
    external fun verifyPacked(handle: Long, delivery: ByteArray): ByteArray?

    /** Releases a `WebhookVerifier` handle (its cleaner's action when [available]). */
    @JvmStatic
    external fun freeVerifier(handle: Long)

    /**
     * A delivery's receipt through JNI ([JniReceipt]): `[0] + handle (8 bytes) + first ReceiptStep`
     * or `[1] + RoyaltyKitException`, or null. [verifier] and [window] (0: none) are borrowed;
     * [flags]: 1 transactional, 2 claim the content key, 4 inbox.
     */
    @JvmStatic
    external fun receiptOpen(verifier: Long, window: Long, delivery: ByteArray, namespace: ByteArray, flags: Int): ByteArray?

    /** The pending step's outcome reported to a receipt ([JniReceipt.report]'s codes): `[0] + ReceiptStep` or `[1] + RoyaltyKitException`, or null. */
    @JvmStatic
    external fun receiptReport(receipt: Long, outcome: Int, arg: Int): ByteArray?

    /** A receipt's `Option<VerifiedWebhook>` then `Option<String>` (its outcome), or null. */
    @JvmStatic
    external fun receiptState(receipt: Long): ByteArray?

    /** Releases a receipt made by [receiptOpen], once. */
    @JvmStatic
    external fun receiptFree(receipt: Long)

    /** Releases a `DedupWindow` handle cloned with `uniffiCloneHandle`, once. */
    @JvmStatic
    external fun windowFree(window: Long)

    /**
     * One call of a dedup store's protocol ([FastDedup]; the operations are listed in
     * src/jni.rs): `[0] + value` or `[1] + RoyaltyKitException`, or null. [protocol] is a
     * cloned handle of a `RedisDedupProtocol` (ops 1 to 4) or a `SqlDedupProtocol` (11 to 14).
     */
    @JvmStatic
    external fun dedupCall(protocol: Long, op: Int, args: ByteArray): ByteArray?

    /**
     * Releases a handle cloned or made for JNI, once: [kind] 0 a `RedisDedupProtocol` and 1 a
     * `SqlDedupProtocol` ([dedupCall]), 2 a `Session` ([callStep]), 3 a call ([callOpen]).
     */
    @JvmStatic
    external fun release(handle: Long, kind: Int)

    /**
     * `Call(operationId, params, maxAttempts, maxElapsedSeconds, seed)` through JNI ([JniCall]),
     * the arguments in uniffi's serialisation: `[0] + handle` (8 bytes) or `[1] +
     * RoyaltyKitException`, or null.
     */
    @JvmStatic
    external fun callOpen(args: ByteArray): ByteArray?

    /**
     * One input of a call made by [callOpen] on a cloned `Session` handle (the operations are
     * listed in src/jni.rs): `[0] + answer` or `[1] + RoyaltyKitException`, or null.
     */
    @JvmStatic
    external fun callStep(call: Long, session: Long, op: Int, args: ByteArray): ByteArray?

    /** `[0] + handle` (8 bytes) or `[1] + RoyaltyKitException`, or null; see [newWebhookVerifier]. */
    @JvmStatic
    external fun newVerifier(args: ByteArray): ByteArray?

    /**
     * The handle of a new `WebhookVerifier` made through JNI, or null when JNI is not available
     * or the call did not complete (the generated constructor then makes it through JNA, with
     * the same rules); throws the core's [RoyaltyKitException] for arguments it refuses, as the
     * JNA path does. The arguments cross in uniffi's serialisation, written by the generated
     * converters, so a lone surrogate is refused exactly as there. The generated constructor
     * calls this (scripts/patch_kotlin_bindings.py).
     */
    @Throws(RoyaltyKitException::class)
    fun newWebhookVerifier(secrets: List<String>, toleranceSeconds: Long?, maxBodyBytes: Long?, validUntil: List<Long?>): Long? {
        if (!available) return null
        val size = FfiConverterSequenceString.allocationSize(secrets) + FfiConverterOptionalLong.allocationSize(toleranceSeconds) +
            FfiConverterOptionalLong.allocationSize(maxBodyBytes) + FfiConverterSequenceOptionalLong.allocationSize(validUntil)
        val args = ByteBuffer.allocate(size.toInt())
        FfiConverterSequenceString.write(secrets, args)
        FfiConverterOptionalLong.write(toleranceSeconds, args)
        FfiConverterOptionalLong.write(maxBodyBytes, args)
        FfiConverterSequenceOptionalLong.write(validUntil, args)
        val answer = newVerifier(args.array().copyOf(args.position())) ?: return null
        return jniAnswer(answer).getLong()
    }
}

/**
 * The value of a JNI answer: `[0] + value` gives the buffer positioned at the value, `[1] +
 * RoyaltyKitException` throws that exception (the layout `put` writes in `src/jni.rs`).
 */
@Throws(RoyaltyKitException::class)
internal fun jniAnswer(answer: ByteArray): ByteBuffer {
    val buf = ByteBuffer.wrap(answer)
    if (buf.get() != 0.toByte()) throw FfiConverterTypeRoyaltyKitError.read(buf)
    return buf
}

/**
 * A handle cloned (or made) for JNI and released through [NativeFast.release] after [close], once
 * no call is in flight, or when this is collected: as uniffi counts its objects' calls, so an
 * object closed while a call is in flight is never freed under that call; once released,
 * [borrowing] answers null.
 */
internal open class ClonedHandle(clone: Long, kind: Int) {
    private val handle = clone

    // The calls in flight, plus one until [close].
    private val calls = AtomicLong(1)
    private val closed = AtomicBoolean(false)
    private val release = UniffiObjectCleaner.CLEANER.register(this) { NativeFast.release(clone, kind) }

    /** [block] with the handle, or null when this is closed. */
    fun <T> borrowing(block: (Long) -> T): T? {
        do {
            val c = calls.get()
            if (c == 0L) return null
        } while (!calls.compareAndSet(c, c + 1))
        try {
            return block(handle)
        } finally {
            if (calls.decrementAndGet() == 0L) release.clean()
            Reference.reachabilityFence(this)
        }
    }

    /** No call crosses here after this; the handle is released when the last one in flight returns. */
    fun close() {
        if (closed.compareAndSet(false, true) && calls.decrementAndGet() == 0L) release.clean()
    }
}

/**
 * A dedup store's protocol through JNI ([NativeFast.dedupCall]): [RedisDedupStore] and
 * [JdbcDedupStore] ask it for each delivery's commands and replies, and make the generated JNA
 * call when [call] answers null (the call did not complete). Through JNA every call allocates
 * `Structure`s whose native memory registers in JNA's global map and cleaner: four or five per
 * delivery made the JVM receiver several times slower than a hand-written endpoint on Redis and
 * PostgreSQL (bench/PROFILES.md). Holds a clone of the protocol's handle; after [close], [call]
 * answers null, so the JNA call reports the closed object as before.
 */
internal class FastDedup private constructor(clone: Long, sql: Boolean) : ClonedHandle(clone, if (sql) 1 else 0) {
    /** The answer of operation [op] with the arguments [write] puts in [size] bytes, read past its
     * first byte; null when it did not complete or this is closed; throws the core's error. */
    fun call(op: Int, size: ULong, write: (ByteBuffer) -> Unit): ByteBuffer? = borrowing { handle ->
        val args = ByteBuffer.allocate(size.toInt())
        write(args)
        // allocationSize is an upper bound (3 bytes per UTF-16 unit): only what was written crosses.
        NativeFast.dedupCall(handle, op, args.array().copyOf(args.position()))
    }?.let(::jniAnswer)

    companion object {
        /** Null when JNI is not in use in this process; [clone] is the protocol's `uniffiCloneHandle`. */
        fun of(sql: Boolean, clone: () -> Long): FastDedup? =
            if (NativeFast.available) FastDedup(clone(), sql) else null
    }
}

/**
 * Which native path this process uses, for diagnostics (like Netty's `Epoll.isAvailable()`):
 * [jni] is true when `WebhookVerifier` is built and verifies through JNI (the JVM, with the
 * library loaded from the per-user cache, see [NativeLoader]), so a JVM that only verifies never
 * starts JNA, a `WebhookReceiver` drives each delivery's receipt and its store's protocol through
 * JNI too, and so do the clients each request's `Call`; every other call crosses through JNA.
 * False on Android, with
 * `-Droyaltykit.jni=false`, or when the cache could not be written: everything then goes through
 * JNA, with the same results.
 */
object RoyaltyKitNative {
    /** True when `WebhookVerifier` is built and verifies through JNI in this process. */
    @JvmStatic
    val jni: Boolean
        get() = NativeFast.available

    /** The native library file loaded for JNI (in the per-user cache), or null. */
    @JvmStatic
    val path: String?
        get() = NativeLoader.jniPath
}
