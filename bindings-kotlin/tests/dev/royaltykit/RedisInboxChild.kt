// A Redis inbox worker process for RedisInboxTest's SIGKILL case: drains a RedisInbox (lease 1 s)
// whose handler counts one effect per run in a Redis hash (HINCRBY <effects> <ref> 1) and, with
// `hang`, then sleeps a minute on the first entry, so the test kills it between the effect and
// the mark.
//
//   java -cp … dev.royaltykit.RedisInboxChildKt <redis port> <prefix> <effects key> <hang|run>
//
// Prints `ready` once the inbox is open, then per entry `start <ref>`, `effect <ref>` (the effect
// written, the entry not marked yet) and `end <ref>`; `drained <processed> <retried> <poisoned>`
// when nothing is due.
package dev.royaltykit

fun main(args: Array<String>) {
    val (port, prefix, effects, mode) = args
    val redis = Resp(port.toInt())
    val inbox = RedisInbox(redis, prefix, leaseSeconds = 1)
    println("ready")
    System.out.flush()
    var first = true
    val report = inbox.drain(maxAttempts = 20) { event, commands ->
        val ref = event.resourceReference
        println("start $ref")
        System.out.flush()
        commands.execute(listOf("HINCRBY", effects, ref, "1"))
        println("effect $ref")
        System.out.flush()
        if (mode == "hang" && first) Thread.sleep(60_000)
        first = false
        println("end $ref")
        System.out.flush()
    }
    println("drained ${report.processed} ${report.retried} ${report.poisoned}")
    inbox.close()
    redis.close()
}
