// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

/** The stable error code of any royaltykit error, the same as in Rust, JS and Python. */
val RoyaltyKitException.code: String
    get() = when (this) {
        is RoyaltyKitException.Webhook -> this.code
        is RoyaltyKitException.InvalidArgument -> this.code
    }

/** [signWebhook] with one secret. */
fun signWebhook(secret: String, body: ByteArray, timestamp: Long? = null, deliveryId: String? = null): Map<String, String> =
    signWebhook(listOf(secret), body, timestamp, deliveryId)
