public import Foundation

extension SampleBatch {
    /// A workout and the ids of the samples that belong to it (saved in earlier batches or in this one).
    public struct WorkoutEntry: Hashable, Sendable {
        public var workout: Workout
        public var sampleIDs: [UUID]

        public init(_ workout: Workout, sampleIDs: [UUID]) {
            self.workout = workout
            self.sampleIDs = sampleIDs
        }
    }
}
