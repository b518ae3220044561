// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

/** The stable error code of any royaltykit error, the same as in Rust, JS and Python. */
val RoyaltyKitException.code: String
    get() = when (this) {
        is RoyaltyKitException.Webhook -> this.code
        is RoyaltyKitException.InvalidArgument -> this.code
        is RoyaltyKitException.Request -> this.code
        is RoyaltyKitException.TokenResponse -> this.code
        is RoyaltyKitException.Api -> this.code
        is RoyaltyKitException.ExportState -> this.code
        is RoyaltyKitException.ExportDownload -> this.code
    }

/** This parsed error as a throwable `RoyaltyKitException.Api`. */
fun ApiError.toException(): RoyaltyKitException.Api =
    RoyaltyKitException.Api("api_error", "$status $message ($kind)", this)

/** [signWebhook] with one secret. */
fun signWebhook(secret: String, body: ByteArray, timestamp: Long? = null, deliveryId: String? = null): Map<String, String> =
    signWebhook(listOf(secret), body, timestamp, deliveryId)
