/// Why a grant was refused; each endpoint words it in its own format.
enum GrantError: Error, Equatable {
    case unknownUser(String)
    case unknownClient(String)
    case accountDeleted(String)
    case capacity(CapacityError)
    case timeOutOfRange
}
