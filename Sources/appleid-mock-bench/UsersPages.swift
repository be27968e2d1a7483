import Foundation


/// `GET /__mock/users` page by page (`offset`, `next_offset`), as a client that lists every user
/// does.
enum UsersPages {
    /// Every user, in order, read a page at a time; `each` sees each page's size in bytes.
    static func all(_ connection: RawConnection, each: (Int) -> Void = { _ in }) throws -> [[String: Any]] {
        var users: [[String: Any]] = []
        var offset: Int? = 0
        while let at = offset {
            let page = try connection.exchange(Array("GET /__mock/users?offset=\(at) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            guard page.status == 200, let answer = (try? JSONSerialization.jsonObject(with: Data(page.body))) as? [String: Any],
                  let listed = answer["users"] as? [[String: Any]] else {
                throw ServerProcess.Failure(description: "GET /__mock/users?offset=\(at) answered \(page.status)")
            }
            each(page.body.count)
            users += listed
            offset = answer["next_offset"] as? Int
        }
        return users
    }
}
