internal import GATT
internal import Health
internal import Support

/// A glucose meter's stored-record transfer (`docs/gatt-glucose.md`, "The transfer").
///
/// A meter sends its records only when asked, through the Record Access Control Point. Once a session has
/// subscribed (measurements, contexts and the control point's indications), the service writes "report stored
/// records with a sequence number of at least N+1", where N is the highest sequence number already stored for
/// that meter, or "report all records" when none is. N is the larger of what the store holds (the samples'
/// `glucoseSequenceNumber` metadata, read at each session, so it survives restarts) and what this service's builder
/// has already built (samples that may still wait in the writer's queue). Only records that became samples count:
/// a record waiting for its context when the link drops is asked for again. Together with the derived sample ids
/// (a record sent twice is the same sample) no record is missed or doubled across sessions.
///
/// The meter indicates a response code when the transfer ends (success, no records found, aborted, procedure not
/// completed): it is logged, and nothing else is needed, since the next session asks from the stored maximum
/// again. A meter answering "procedure already in progress" (ATT 0xFE: a transfer of an earlier session still
/// runs in it) is sent an abort, then the request once more.
extension GatewayService {
    /// The job's input: which sensor, and its control point.
    struct GlucoseTransferRequest: Sendable {
        var address: String
        var peripheral: PeripheralID
        var controlPoint: CharacteristicInfo
    }

    /// The transfer to start after `result` subscribed, when the sensor is a glucose meter.
    func glucoseTransfer(address: String, id: PeripheralID?, _ result: Subscription) -> GlucoseTransferRequest? {
        guard let id, let controlPoint = result.subscribed.first(where: { $0.uuid == .recordAccessControlPoint })
        else { return nil }
        sensors[address]?.builder.glucoseSessionStarted()
        return GlucoseTransferRequest(address: address, peripheral: id, controlPoint: controlPoint)
    }

    /// Asks the meter for the records after the highest stored one (see the extension's comment).
    nonisolated func requestGlucoseRecords(_ request: GlucoseTransferRequest) async {
        let stored = await storedGlucoseSequence(of: request.address)
        let built = await sensors[request.address]?.builder.highestGlucoseSequence
        let highest = [stored, built].compactMap { $0 }.max()
        let value: RecordAccessControlPoint
        switch highest {
        case nil: value = .reportAllRecords
        case UInt16.max?:
            log.notice(
                "glucose meter \(address: request.address): sequence numbers exhausted; no records asked for",
                fields: [.sensor(request.address)])
            return
        case let highest?: value = .reportRecords(from: highest + 1)
        }
        do throws(CentralError) {
            try await writeControlPoint(value, request)
        } catch  where error.detail.lowercased().contains("att error: 0xfe") {
            log.info(
                "glucose meter \(address: request.address): a transfer is already in progress; aborting it",
                fields: [.sensor(request.address)])
            do throws(CentralError) {
                try await writeControlPoint(.abort, request)
                try await writeControlPoint(value, request)
            } catch {
                log.info("glucose meter \(address: request.address): \(error)", fields: [.sensor(request.address)])
            }
        } catch {
            log.info("glucose meter \(address: request.address): \(error)", fields: [.sensor(request.address)])
        }
    }

    private nonisolated func writeControlPoint(
        _ value: RecordAccessControlPoint, _ request: GlucoseTransferRequest
    ) async throws(CentralError) {
        try await central.write(value.encoded(), to: request.controlPoint, of: request.peripheral, withResponse: true)
    }

    /// The highest `glucoseSequenceNumber` of the meter's samples in the store; `nil` when it has none or the
    /// registry is not a store (recording only).
    nonisolated func storedGlucoseSequence(of address: String) async -> UInt16? {
        guard let store = registry as? any HealthStore else { return nil }
        let key = "glucoseSequenceNumber"
        var query = SampleQuery(type: .bloodGlucose, devices: [address], metadata: [.exists(key)], limit: 1_000)
        var highest: Int64?
        do {
            while true {
                let page = try await store.samples(query, as: .owner)
                for sample in page.samples {
                    guard case .integer(let sequence) = sample.metadata[key] else { continue }
                    highest = max(highest ?? sequence, sequence)
                }
                guard let next = page.next else { break }
                query.cursor = next
            }
        } catch {
            log.warning(
                "glucose meter \(address: address): cannot read its stored records (\(error)); asking for all",
                fields: [.sensor(address)])
            return nil
        }
        return highest.flatMap { UInt16(exactly: $0) }
    }

    /// Logs what a meter's control point indicated (the end of a transfer).
    func glucoseIndicated(address: String) {
        guard let value = sensors[address]?.builder.lastGlucoseControlPoint else { return }
        if let response = value.responseCode {
            let name = response.code?.name ?? "reserved"
            log.info("glucose meter \(address: address): record transfer ended: \(name)", fields: [.sensor(address)])
        }
    }
}
