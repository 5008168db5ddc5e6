// Small questions the flow walker asks of the AST (engine/flow/Walker.h): what an expression is
// beneath its conversions, which types are handles, tensors or std containers, which records can
// be followed field by field, and what an overloaded operator computes. They keep no state.
#pragma once

#include "engine/Value.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/OperationKinds.h"
#include "clang/Basic/OperatorKinds.h"
#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <optional>

// Private to the walker's sources, which speak clang's names unqualified.
namespace collcheck::lint {
using namespace clang;
namespace flow {

const Expr *strip(const Expr *e);
bool isStdDecl(const Decl *d);
bool isTensorLike(QualType type);
bool isHandleType(QualType type);
// A pointer to non-const or a non-const lvalue reference: what a callee leaves behind a parameter
// of this type is what the caller's argument holds.
bool isOutPointerOrReference(QualType type);
bool isStdContainer(const CXXRecordDecl *record);
bool isStdPair(const CXXRecordDecl *record);
const CXXRecordDecl *fieldwiseRecord(QualType type);
std::shared_ptr<const FieldValues> fieldsOf(const CXXRecordDecl *record,
                                            llvm::ArrayRef<Value> values);
std::shared_ptr<const FieldValues> fieldsFor(const CXXRecordDecl *record,
                                             std::shared_ptr<const FieldValues> fields);
const FieldDecl *fieldAt(const CXXRecordDecl *record, unsigned index);
bool isArithmetic(QualType type);
QualType underlyingType(const Expr *e);
bool hasType(const Expr *e);
bool pointerTyped(const Expr *e);
bool integralUnderlying(const Expr *e);
const NamedDecl *coreDecl(const Expr *e);
bool isNoReturnCall(const Expr *e);
bool writes(const Stmt *s, const ValueDecl *decl);
bool isDefaultAllocator(const Expr *arg);
bool isMpiAbort(const Expr *e);
std::optional<BinaryOperatorKind> binaryOpFor(OverloadedOperatorKind op, bool &compound);

} // namespace flow
} // namespace collcheck::lint
