import BLE
import Foundation

/// The code of the "Errors and retries" article.
enum ErrorsAndRetries {
    /// Reads a characteristic, retrying transient failures a few times.
    static func readWithRetry(_ characteristic: Characteristic, attempts: Int = 3) async throws(BLEError) -> Data {
        // snippet.begin retry-transient
        var attempt = 1
        while true {
            do {
                return try await characteristic.read(timeout: .seconds(2))
            } catch {
                guard error.isTransient, attempt < attempts else {
                    print("\(error.code) \(error.dbusErrorName ?? "-") \(error.message)")
                    throw error
                }
                print("attempt \(attempt) failed (\(error.code)): \(error.message); retrying")
                attempt += 1
                try? await Task.sleep(for: .milliseconds(100 * attempt))
            }
        }
        // snippet.end
    }
}
