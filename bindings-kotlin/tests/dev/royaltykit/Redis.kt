package dev.royaltykit

import java.io.BufferedInputStream
import java.io.BufferedOutputStream
import java.io.IOException
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.TimeUnit

/**
 * A throw-away `redis-server` on 127.0.0.1 for one test ([port]: a free one unless given), nothing
 * saved to disk; [close] stops it. Started in the constructor, and answering PING when it returns.
 */
class RedisServer(val port: Int = freePort()) : AutoCloseable {
    private val process: Process = ProcessBuilder(
        "redis-server", "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
    ).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start()

    init {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (true) {
            val up = try {
                Resp(port).use { it.execute(listOf("PING")) == "PONG" }
            } catch (e: IOException) {
                if (System.nanoTime() > deadline) {
                    close()
                    throw AssertionError("redis-server did not start on $port", e)
                }
                false
            }
            if (up) break
            Thread.sleep(50)
        }
    }

    /** A client of this server (one connection). */
    fun client(): Resp = Resp(port)

    override fun close() {
        process.destroy()
        process.waitFor(10, TimeUnit.SECONDS)
    }

    companion object {
        /** A port nothing listens on now. */
        fun freePort(): Int = ServerSocket(0).use { it.localPort }
    }
}

/**
 * A RESP client of one connection to 127.0.0.1:[port]: enough of Redis's protocol for
 * [RedisDedupStore] and [RedisFleet] (bulk, status, integer and error replies). It connects at its
 * first command and again after a failure, so a Redis that was down and came back is used again;
 * a Redis that cannot be reached throws `IOException`. Thread-safe (one command at a time).
 */
class Resp(private val port: Int) : RedisCommands, AutoCloseable {
    private var socket: Socket? = null
    private lateinit var out: BufferedOutputStream
    private lateinit var input: BufferedInputStream

    @Synchronized
    override fun execute(command: List<String>): String? {
        try {
            if (socket == null) {
                val s = Socket("127.0.0.1", port)
                out = BufferedOutputStream(s.getOutputStream())
                input = BufferedInputStream(s.getInputStream())
                socket = s
            }
            out.write("*${command.size}\r\n".toByteArray())
            for (arg in command) {
                val b = arg.toByteArray()
                out.write("$${b.size}\r\n".toByteArray())
                out.write(b)
                out.write("\r\n".toByteArray())
            }
            out.flush()
            return reply()
        } catch (e: RespError) {
            throw IOException(e.message)
        } catch (e: IOException) {
            close()
            throw e
        }
    }

    /** An error reply (the connection stays usable). */
    private class RespError(message: String) : Exception(message)

    private fun line(): String {
        val b = StringBuilder()
        while (true) {
            val c = input.read()
            if (c < 0) throw IOException("the connection closed")
            if (c == '\r'.code) { input.read(); return b.toString() }
            b.append(c.toChar())
        }
    }

    private fun reply(): String? = when (val t = input.read()) {
        '+'.code, ':'.code -> line()
        '-'.code -> throw RespError(line())
        '$'.code -> line().toInt().let { n -> if (n < 0) null else String(input.readNBytes(n)).also { input.readNBytes(2) } }
        -1 -> throw IOException("the connection closed")
        else -> throw IOException("unexpected reply type ${t.toChar()}")
    }

    @Synchronized
    override fun close() {
        socket?.close()
        socket = null
    }
}
